package benchrun_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labmate/labmate/lab/benchrun"
)

// The Opentrons Protocol Library benchmark: every protocols/*/*.ot2.apiv2.py of a checkout of
// github.com/Opentrons/Protocols, with its fields.json defaults and labware/ folder, simulated
// on a fresh twin in the sandboxed Python kernel. Run it with
//
//	go test ./lab/benchrun -run TestProtocolLibrary -protocols DIR [-protocols-sample N] [-protocols-report FILE]
//
// (or LABMATE_OT_PROTOCOLS=DIR); without a directory it is skipped. It reports the coverage,
// the failures by cause, the median and maximum wall time per protocol.
var (
	protocolsDir    = flag.String("protocols", os.Getenv("LABMATE_OT_PROTOCOLS"), "the protocols/ folder of a checkout of github.com/Opentrons/Protocols")
	protocolsSample = flag.Int("protocols-sample", 0, "run a fixed random sample of this many protocols (0: all)")
	protocolsReport = flag.String("protocols-report", "", "write one line per protocol (ok, seconds, commands, failure) to this file")
	protocolsMin    = flag.Float64("protocols-min", 0.9, "the fraction that must simulate to the end")
	protocolsPar    = flag.Int("protocols-parallel", 2, "protocols simulated at once")
)

type libResult struct {
	file     string
	ok       bool
	seconds  float64
	commands int
	failure  string
}

var (
	lineRE   = regexp.MustCompile(`line \d+: `)
	quotedRE = regexp.MustCompile(`'[^']*'|"[^"]*"|\d+(\.\d+)?`)
)

// cause groups a failure: the unmodelled name, or the twin's or Python's problem without its
// numbers and names.
func cause(failure string) string {
	f := lineRE.ReplaceAllString(strings.SplitN(failure, "\n", 2)[0], "")
	if i := strings.Index(f, " is not modelled"); i >= 0 {
		return "unmodelled: " + f[:i]
	}
	if strings.HasPrefix(f, "bench: ") {
		if i := strings.LastIndex(f, ": "); i >= 0 {
			f = "twin: " + f[i+2:]
		}
	}
	f = quotedRE.ReplaceAllString(f, "…")
	if len(f) > 110 {
		f = f[:110]
	}
	return f
}

func TestProtocolLibrary(t *testing.T) {
	if *protocolsDir == "" {
		t.Skip("no -protocols DIR (a checkout of github.com/Opentrons/Protocols/protocols)")
	}
	files, err := filepath.Glob(filepath.Join(*protocolsDir, "*", "*.ot2.apiv2.py"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no */*.ot2.apiv2.py in %s (%v)", *protocolsDir, err)
	}
	slices.Sort(files)
	if n := *protocolsSample; n > 0 && n < len(files) {
		r := rand.New(rand.NewPCG(33, 80))
		r.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
		files = files[:n]
		slices.Sort(files)
	}
	start := starter(t)
	results := make([]libResult, len(files))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done *os.File // the results as they come: a run cut short still tells
	)
	if *protocolsReport != "" {
		if done, err = os.Create(*protocolsReport + ".partial"); err != nil {
			t.Fatal(err)
		}
		defer done.Close()
	}
	sem := make(chan struct{}, max(*protocolsPar, 1))
	for i, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runLibrary(start, f)
			if done != nil {
				mu.Lock()
				r := results[i]
				fmt.Fprintf(done, "%s\t%v\t%.2f\t%d\t%s\n", r.file, r.ok, r.seconds, r.commands, strings.ReplaceAll(r.failure, "\n", " "))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	var ok int
	var secs []float64
	causes := map[string]int{}
	var report strings.Builder
	for _, r := range results {
		secs = append(secs, r.seconds)
		if r.ok {
			ok++
		} else {
			causes[cause(r.failure)]++
		}
		rel, _ := filepath.Rel(*protocolsDir, r.file)
		fmt.Fprintf(&report, "%s\t%v\t%.2f\t%d\t%s\n", rel, r.ok, r.seconds, r.commands, strings.ReplaceAll(r.failure, "\n", " "))
	}
	sort.Float64s(secs)
	t.Logf("Opentrons Protocol Library: %d of %d protocols simulate to the end (%.1f%%); wall time per protocol: median %.2f s, max %.2f s",
		ok, len(results), 100*float64(ok)/float64(len(results)), secs[len(secs)/2], secs[len(secs)-1])
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range causes {
			if !yield(k) {
				return
			}
		}
	})
	sort.Slice(keys, func(i, j int) bool {
		return causes[keys[i]] > causes[keys[j]] || causes[keys[i]] == causes[keys[j]] && keys[i] < keys[j]
	})
	for _, k := range keys {
		t.Logf("%4d  %s", causes[k], k)
	}
	if *protocolsReport != "" {
		if err := os.WriteFile(*protocolsReport, []byte(report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	if float64(ok) < *protocolsMin*float64(len(results)) {
		t.Errorf("%d of %d simulate to the end, under %.0f%%", ok, len(results), 100**protocolsMin)
	}
}

func runLibrary(start benchrun.StartFunc, file string) libResult {
	r := libResult{file: file}
	t0 := time.Now()
	defer func() { r.seconds = time.Since(t0).Seconds() }()
	code, err := os.ReadFile(file)
	if err != nil {
		r.failure = err.Error()
		return r
	}
	params, defs, _, err := benchrun.Beside(file)
	if err != nil {
		r.failure = err.Error()
		return r
	}
	rep, err := benchrun.Simulate(context.Background(), string(code), &benchrun.Options{Start: start, Params: params, Labware: defs,
		Timeout: 2 * time.Minute})
	r.seconds = time.Since(t0).Seconds()
	if err != nil {
		r.failure = "could not run: " + err.Error()
		return r
	}
	r.commands = len(rep.Entries)
	r.ok = rep.Failure == ""
	r.failure = rep.Failure
	return r
}

var _ = strconv.Itoa
