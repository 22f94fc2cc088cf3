package client_test

import (
	"context"
	"testing"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/kernel/kerneltest"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/protocol"
)

// serveBench serves a fresh bench on workspace ws as labmate does (benchrun.Serve: the socket
// Python's module connects to and the pipes Octave's functions use) until the test ends, and
// returns its deck: read it once the kernel is done.
func serveBench(t testing.TB, ws string) *bench.Deck {
	t.Helper()
	d := bench.NewDeck()
	s, err := benchrun.Serve(context.Background(), ws, &benchrun.ServeOptions{Deck: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return d
}

// benchCommands measures a kernel's bench commands per second: setup runs once, then cell,
// which carries out commands commands, b.N times; reported as cmds/s.
func benchCommands(b *testing.B, k kernel.Kernel, setup, cell string, commands int) {
	b.Helper()
	if r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: setup, Timeout: time.Minute}); r.Res == nil || r.Res.Status != protocol.StatusOK {
		b.Fatalf("setup: %+v\n%s", r.Res, r.Output())
	}
	start := time.Now()
	for b.Loop() {
		if r := kerneltest.Exec(context.Background(), k, &kernel.Cell{Code: cell, Timeout: time.Minute}); r.Res == nil || r.Res.Status != protocol.StatusOK {
			b.Fatalf("%+v\n%s", r.Res, r.Output())
		}
	}
	b.ReportMetric(float64(b.N*commands)/time.Since(start).Seconds(), "cmds/s")
}
