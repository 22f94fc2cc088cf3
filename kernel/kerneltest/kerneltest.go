// Package kerneltest is the one test suite every kernel.Kernel implementation passes, with
// real interpreters: persistence, streaming, interrupts, errors, timeouts, output caps,
// crashes, bad input and the sandbox's promises.
package kerneltest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/protocol"
)

// Lang holds the code the suite runs, in the kernel's language.
type Lang struct {
	Start func(context.Context, *kernel.Options) (kernel.Kernel, error)
	// SetA sets variable a to 42; PrintA prints it alone on a line.
	SetA, PrintA string
	// Loop sets k = 0 and then increments k forever; PrintK prints k alone on a line.
	Loop, PrintK string
	// Ticks prints "tick 1" … "tick 5", one every 100 ms.
	Ticks string
	// Count prints the integers 1…N, one per line, as fast as it can (N substituted for %d).
	Count string
	// Log records telemetry sample "energy" with value 2.5 through the injected helper.
	Log string
	// Errors are cells that must end with StatusError, with Want in the stderr observations
	// and (when Line > 0) the result pointing at Line.
	Errors []ErrorCell
	// Sandbox probes, each printing "BLOCKED" when the sandbox stopped the attempt and
	// then going on: an HTTP GET or TCP connect to 127.0.0.1:%d, writing the file %s.
	Connect, WriteFile string
	// BigAlloc allocates 10 GB and prints "RECOVERED" when that failed cleanly (optional).
	BigAlloc string
	// ForkBomb starts processes without bound (and must not take the host down).
	ForkBomb string
	// Flood prints 1 GB of output.
	Flood string
}

// ErrorCell is a cell that must fail.
type ErrorCell struct {
	Name, Code, Want string
	Line             int
}

// Result of running one cell to the end.
type Result struct {
	Obs    []*protocol.Observation
	Res    *protocol.Result
	Err    error
	Stdout []string
	Stderr []string
}

// Exec runs c to the end and collects everything.
func Exec(ctx context.Context, k kernel.Kernel, c *kernel.Cell) *Result {
	r := &Result{}
	for s, err := range k.Exec(ctx, c) {
		if err != nil {
			r.Err = err
			continue
		}
		if s.Result != nil {
			r.Res = s.Result
			continue
		}
		r.Obs = append(r.Obs, s.Observation)
		switch s.Observation.Kind {
		case protocol.ObsStdout:
			r.Stdout = append(r.Stdout, s.Observation.Line)
		case protocol.ObsStderr:
			r.Stderr = append(r.Stderr, s.Observation.Line)
		}
	}
	return r
}

// Output is all stdout and stderr lines, for failure messages.
func (r *Result) Output() string {
	return "stdout:\n" + strings.Join(r.Stdout, "\n") + "\nstderr:\n" + strings.Join(r.Stderr, "\n")
}

func run(t *testing.T, k kernel.Kernel, code string, timeout time.Duration) *Result {
	t.Helper()
	r := Exec(context.Background(), k, &kernel.Cell{Code: code, Timeout: timeout})
	if r.Err != nil {
		t.Fatalf("Exec(%q): %v", code, r.Err)
	}
	if r.Res == nil {
		t.Fatalf("Exec(%q): no result", code)
	}
	return r
}

func mustOK(t *testing.T, k kernel.Kernel, code string) *Result {
	t.Helper()
	r := run(t, k, code, 30*time.Second)
	if r.Res.Status != protocol.StatusOK {
		t.Fatalf("Exec(%q) = %s (%s), want ok\n%s", code, r.Res.Status, r.Res.Error, r.Output())
	}
	return r
}

// Run runs the suite. opts must carry a real sandbox; each subtest starts its own kernel
// with a fresh workspace.
func Run(t *testing.T, l Lang, opts kernel.Options) {
	start := func(t *testing.T) kernel.Kernel {
		t.Helper()
		o := opts
		o.Workspace = t.TempDir()
		k, err := l.Start(context.Background(), &o)
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		t.Cleanup(func() { k.Close() })
		return k
	}

	t.Run("Persistence", func(t *testing.T) {
		k := start(t)
		mustOK(t, k, l.SetA)
		r := mustOK(t, k, l.PrintA)
		if !contains(r.Stdout, "42") {
			t.Errorf("a not kept between cells:\n%s", r.Output())
		}
	})

	t.Run("InterruptKeepsWorkspace", func(t *testing.T) {
		k := start(t)
		mustOK(t, k, l.SetA)
		var sent time.Time
		go func() {
			time.Sleep(time.Second)
			sent = time.Now()
			k.Interrupt()
		}()
		r := run(t, k, l.Loop, 30*time.Second)
		latency := time.Since(sent)
		if r.Res.Status != protocol.StatusInterrupted {
			t.Fatalf("status %s (%s), want interrupted\n%s", r.Res.Status, r.Res.Error, r.Output())
		}
		if latency > 200*time.Millisecond {
			t.Errorf("interrupt took %v, want < 200ms", latency)
		}
		if !r.Res.WorkspaceOK {
			t.Error("workspace_kept is false after an interrupt")
		}
		if !contains(mustOK(t, k, l.PrintA).Stdout, "42") {
			t.Error("variable set before the loop lost after interrupt")
		}
		out := mustOK(t, k, l.PrintK).Stdout
		if n, err := strconv.Atoi(last(out)); err != nil || n <= 0 {
			t.Errorf("loop variable after interrupt = %q, want a positive count", out)
		}
	})

	t.Run("ContextCancelInterrupts", func(t *testing.T) {
		k := start(t)
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		r := Exec(ctx, k, &kernel.Cell{Code: l.Loop})
		if r.Err != nil || r.Res == nil || r.Res.Status != protocol.StatusInterrupted {
			t.Fatalf("cancelled cell: err %v result %+v", r.Err, r.Res)
		}
		mustOK(t, k, l.PrintK)
	})

	t.Run("BreakStopsCell", func(t *testing.T) {
		k := start(t)
		for range k.Exec(context.Background(), &kernel.Cell{Code: l.Ticks}) {
			break // the consumer stops listening: the cell is interrupted, the kernel stays usable
		}
		mustOK(t, k, l.SetA)
	})

	t.Run("Errors", func(t *testing.T) {
		k := start(t)
		for _, e := range l.Errors {
			r := run(t, k, e.Code, 30*time.Second)
			if r.Res.Status != protocol.StatusError {
				t.Errorf("%s: status %s, want error\n%s", e.Name, r.Res.Status, r.Output())
				continue
			}
			if r.Res.Error == "" || !strings.Contains(strings.Join(r.Stderr, "\n"), e.Want) {
				t.Errorf("%s: error %q, stderr %q: want an error and %q in the stderr observations", e.Name, r.Res.Error, r.Stderr, e.Want)
			}
			if e.Line > 0 && r.Res.Line != e.Line {
				t.Errorf("%s: line %d, want %d\n%s", e.Name, r.Res.Line, e.Line, r.Output())
			}
			if !r.Res.WorkspaceOK {
				t.Errorf("%s: workspace_kept false after an error", e.Name)
			}
			mustOK(t, k, l.SetA) // the next cell runs in the same session
		}
	})

	t.Run("Streaming", func(t *testing.T) {
		k := start(t)
		begin := time.Now()
		var ticks []time.Time
		var lines []string
		for s, err := range k.Exec(context.Background(), &kernel.Cell{Code: l.Ticks, Timeout: 30 * time.Second}) {
			if err != nil {
				t.Fatal(err)
			}
			if o := s.Observation; o != nil && o.Kind == protocol.ObsStdout {
				ticks = append(ticks, time.Now())
				lines = append(lines, o.Line)
			}
		}
		want := []string{"tick 1", "tick 2", "tick 3", "tick 4", "tick 5"}
		if strings.Join(lines, ",") != strings.Join(want, ",") {
			t.Fatalf("lines %q, want %q", lines, want)
		}
		// Received while running: the first line well before the last was printed.
		if first, end := ticks[0].Sub(begin), ticks[4].Sub(begin); end-first < 300*time.Millisecond {
			t.Errorf("lines arrived together (first at %v, last at %v): not streamed", first, end)
		}
	})

	t.Run("NoLineLost", func(t *testing.T) {
		k := start(t)
		const n = 20000
		r := mustOK(t, k, fmt.Sprintf(l.Count, n))
		if len(r.Stdout) != n {
			t.Fatalf("%d lines, want %d", len(r.Stdout), n)
		}
		for i, s := range r.Stdout {
			if s != strconv.Itoa(i+1) {
				t.Fatalf("line %d = %q, want %d", i+1, s, i+1)
			}
		}
	})

	t.Run("Telemetry", func(t *testing.T) {
		k := start(t)
		r := mustOK(t, k, l.Log)
		var helper bool
		for _, o := range r.Obs {
			if o.Kind == protocol.ObsTelemetry && o.Sample.Name == "energy" && o.Sample.Value == 2.5 {
				helper = helper || o.Sample.Source == protocol.FromHelper
			}
			if o.Kind == protocol.ObsTelemetry && o.Sample.Source != protocol.FromHelper {
				t.Errorf("telemetry not from the helper's side channel: %+v (perception parses printed lines, the kernel does not)", o.Sample)
			}
		}
		if !helper {
			t.Errorf("no helper sample energy=2.5 from %q", l.Log)
		}
		for _, line := range r.Stdout {
			if strings.Contains(line, "energy") {
				t.Errorf("the helper wrote to stdout: %q", r.Stdout)
			}
		}
	})

	t.Run("ResourceSamples", func(t *testing.T) {
		k := start(t)
		r := run(t, k, l.Loop, 1200*time.Millisecond) // samples come every half second
		var n int
		for _, o := range r.Obs {
			if res := o.Resource; res != nil {
				n++
				if res.RSSBytes <= 0 || res.WallSeconds <= 0 || res.MemoryLimit != opts.Sandbox.MemoryLimit() || res.OutputLimit <= 0 {
					t.Errorf("resource sample %+v", res)
				}
			}
		}
		if n == 0 {
			t.Error("no resource sample during a 1.2 s cell")
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		k := start(t)
		begin := time.Now()
		r := run(t, k, l.Loop, 500*time.Millisecond)
		if r.Res.Status != protocol.StatusTimeout || !r.Res.WorkspaceOK {
			t.Fatalf("status %s kept %v, want timeout with the workspace kept", r.Res.Status, r.Res.WorkspaceOK)
		}
		if d := time.Since(begin); d > 1500*time.Millisecond {
			t.Errorf("timeout of 500ms took %v", d)
		}
		mustOK(t, k, l.PrintK)
	})

	t.Run("OutputCap", func(t *testing.T) {
		o := opts
		o.Workspace = t.TempDir()
		o.MaxOutput = 64 << 10
		k, err := l.Start(context.Background(), &o)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		r := mustOK(t, k, fmt.Sprintf(l.Count, 100000))
		var notice bool
		for _, o := range r.Obs {
			notice = notice || (o.Event != nil && o.Event.Name == protocol.EventTruncated)
		}
		if !r.Res.Truncated || !notice {
			t.Errorf("truncated %v notice %v, want both", r.Res.Truncated, notice)
		}
		if got := len(strings.Join(r.Stdout, "\n")); got > 70<<10 {
			t.Errorf("%d bytes of output delivered past a 64 KiB cap", got)
		}
		if r.Res.OutputBytes < 500000 {
			t.Errorf("output_bytes %d: dropped output must still be counted", r.Res.OutputBytes)
		}
	})

	t.Run("CrashAndRestart", func(t *testing.T) {
		k := start(t)
		mustOK(t, k, l.SetA)
		info := k.Info()
		go func() {
			time.Sleep(200 * time.Millisecond)
			syscallKill(info.PID)
		}()
		r := run(t, k, l.Loop, 30*time.Second)
		if r.Res.Status != protocol.StatusCrashed || r.Res.WorkspaceOK {
			t.Fatalf("status %s kept %v, want crashed with the workspace lost", r.Res.Status, r.Res.WorkspaceOK)
		}
		if r := Exec(context.Background(), k, &kernel.Cell{Code: l.SetA}); !errors.Is(r.Err, kernel.ErrDead) {
			t.Fatalf("Exec on a crashed kernel: %v, want ErrDead", r.Err)
		}
		if err := k.Restart(context.Background()); err != nil {
			t.Fatal(err)
		}
		mustOK(t, k, l.SetA)
	})

	t.Run("BadInput", func(t *testing.T) {
		k := start(t)
		for name, c := range map[string]*kernel.Cell{
			"nil":             nil,
			"binary":          {Code: "\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe"},
			"nul":             {Code: "a = 1\x00"},
			"negativeTimeout": {Code: l.SetA, Timeout: -time.Second},
		} {
			if r := Exec(context.Background(), k, c); !errors.Is(r.Err, kernel.ErrBadCell) {
				t.Errorf("%s: err %v, want ErrBadCell", name, r.Err)
			}
		}
		mustOK(t, k, l.SetA)
		k.Close()
		if r := Exec(context.Background(), k, &kernel.Cell{Code: l.SetA}); !errors.Is(r.Err, kernel.ErrClosed) {
			t.Errorf("Exec after Close: %v, want ErrClosed", r.Err)
		}
	})

	t.Run("Sandbox", func(t *testing.T) {
		if l.Connect == "" {
			t.Skip("no sandbox probes for this kernel")
		}
		k := start(t)
		port := listen(t)
		r := mustOK(t, k, fmt.Sprintf(l.Connect, port))
		if !contains(r.Stdout, "BLOCKED") {
			t.Errorf("TCP connect to the host's 127.0.0.1:%d was not blocked:\n%s", port, r.Output())
		}
		outside := filepath.Join(t.TempDir(), "escaped.txt")
		r = mustOK(t, k, fmt.Sprintf(l.WriteFile, outside))
		if _, err := os.Stat(outside); err == nil || !contains(r.Stdout, "BLOCKED") {
			t.Errorf("wrote outside the workspace (%s):\n%s", outside, r.Output())
		}
		if l.BigAlloc != "" {
			r = mustOK(t, k, l.BigAlloc)
			if !contains(r.Stdout, "RECOVERED") {
				t.Errorf("10 GB allocation did not fail recoverably:\n%s", r.Output())
			}
		}
		mustOK(t, k, l.SetA)
	})

	t.Run("ForkBombContained", func(t *testing.T) {
		if l.ForkBomb == "" {
			t.Skip("no fork bomb for this kernel")
		}
		k := start(t)
		r := run(t, k, l.ForkBomb, 3*time.Second)
		if r.Res.Status == protocol.StatusOK {
			t.Logf("fork bomb ended by itself:\n%s", r.Output())
		}
		hostResponsive(t)
		ws := k.Info().Workspace
		k.Close()
		if left := leftovers(ws); left > 0 {
			t.Errorf("%d processes of the fork bomb survived Close", left)
		}
	})

	t.Run("FloodContained", func(t *testing.T) {
		if l.Flood == "" {
			t.Skip("no flood for this kernel")
		}
		k := start(t)
		r := run(t, k, l.Flood, 4*time.Second)
		if !r.Res.Truncated {
			t.Errorf("1 GB of output was not truncated (status %s, %d bytes)", r.Res.Status, r.Res.OutputBytes)
		}
		if n := len(strings.Join(r.Stdout, "\n")); n > 9<<20 {
			t.Errorf("%d bytes delivered past the cap", n)
		}
		hostResponsive(t)
		if r.Res.WorkspaceOK {
			mustOK(t, k, l.SetA)
		}
	})
}

func contains(lines []string, s string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) == s {
			return true
		}
	}
	return false
}

func last(lines []string) string {
	for i := len(lines) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(lines[i]); s != "" {
			return s
		}
	}
	return ""
}
