package kerneltest

import (
	"context"
	"testing"

	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/protocol"
)

// ServeBench serves a fresh bench on workspace ws as labmate does (benchrun.Serve: the socket
// Python's module connects to and the pipes Octave's functions use) until the test ends, and
// returns its deck: read it once the kernel is done.
func ServeBench(t testing.TB, ws string) *bench.Deck {
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

// Series gathers a result's telemetry samples by series name, in order.
func (r *Result) Series() map[string][]float64 {
	m := map[string][]float64{}
	for _, o := range r.Obs {
		if o.Kind == protocol.ObsTelemetry {
			m[o.Sample.Name] = append(m[o.Sample.Name], o.Sample.Value)
		}
	}
	return m
}
