package kerneltest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// BenchLang is the code the benchmarks run.
type BenchLang struct {
	Lang
	// Trivial is a cell that does almost nothing, e.g. "x = 1;".
	Trivial string
	// Stamps prints %d lines, each the Unix time in seconds at the moment it is printed,
	// about a millisecond apart.
	Stamps string
	// BareArgv starts the bare interactive interpreter reading commands from a pipe;
	// BareSetup is sent once; BareCell runs Trivial and then prints BARE_DONE.
	BareArgv            []string
	BareSetup, BareCell string
}

// Bench runs the kernel benchmarks: Start, Cell (per-cell round trip), Bare (the same
// trivial command in the bare interactive interpreter, the baseline), Interrupt (from
// Interrupt() to the result) and LineLatency (from print to Observation).
func Bench(b *testing.B, l BenchLang, opts kernel.Options) {
	start := func(b *testing.B) kernel.Kernel {
		o := opts
		o.Workspace = b.TempDir()
		k, err := l.Start(context.Background(), &o)
		if err != nil {
			b.Fatal(err)
		}
		return k
	}
	b.Run("Start", func(b *testing.B) { // until the first cell could run; Close not counted
		for b.Loop() {
			k := start(b)
			b.StopTimer()
			k.Close()
			b.StartTimer()
		}
	})
	b.Run("Cell", func(b *testing.B) {
		k := start(b)
		defer k.Close()
		for b.Loop() {
			if r := Exec(context.Background(), k, &kernel.Cell{Code: l.Trivial}); r.Err != nil || r.Res.Status != protocol.StatusOK {
				b.Fatalf("%v %+v", r.Err, r.Res)
			}
		}
	})
	b.Run("Bare", func(b *testing.B) { benchBare(b, l) })
	b.Run("Interrupt", func(b *testing.B) {
		k := start(b)
		defer k.Close()
		var lat []time.Duration
		for b.Loop() {
			var sent time.Time
			t := time.AfterFunc(20*time.Millisecond, func() {
				sent = time.Now()
				k.Interrupt()
			})
			r := Exec(context.Background(), k, &kernel.Cell{Code: l.Loop})
			t.Stop()
			if r.Err != nil || r.Res.Status != protocol.StatusInterrupted {
				b.Fatalf("%v %+v", r.Err, r.Res)
			}
			lat = append(lat, time.Since(sent))
		}
		report(b, lat)
	})
	b.Run("LineLatency", func(b *testing.B) {
		k := start(b)
		defer k.Close()
		var lat []time.Duration
		for b.Loop() {
			for s, err := range k.Exec(context.Background(), &kernel.Cell{Code: fmt.Sprintf(l.Stamps, 100)}) {
				if err != nil {
					b.Fatal(err)
				}
				if o := s.Observation; o != nil && o.Kind == protocol.ObsStdout {
					sec, err := strconv.ParseFloat(strings.TrimSpace(o.Line), 64)
					if err != nil {
						b.Fatalf("not a time stamp: %q", o.Line)
					}
					lat = append(lat, o.Time.Sub(time.Unix(0, int64(sec*1e9))))
				}
			}
		}
		report(b, lat)
	})
}

// report adds the mean, p50 and p99 of the samples as metrics.
func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(ms(sum)/float64(len(lat)), "mean-ms")
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[(len(lat)*99)/100]), "p99-ms")
}

func benchBare(b *testing.B, l BenchLang) {
	cmd := exec.Command(l.BareArgv[0], l.BareArgv[1:]...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "OPENBLAS_NUM_THREADS=1", "LANG=C.UTF-8"}
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { in.Close(); cmd.Process.Kill(); cmd.Wait() }()
	out := bufio.NewScanner(outPipe)
	wait := func() {
		for out.Scan() {
			if strings.Contains(out.Text(), "BARE_DONE") {
				return
			}
		}
		b.Fatalf("bare interpreter ended: %v", out.Err())
	}
	io.WriteString(in, l.BareSetup+"\n"+l.BareCell+"\n")
	wait()
	for b.Loop() {
		io.WriteString(in, l.BareCell+"\n")
		wait()
	}
}
