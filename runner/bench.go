package runner

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
	"github.com/labmate/labmate/tool"
)

// spectra colour the dashboard's plate maps.
var spectra = sync.OnceValues(func() (*bench.Library, error) { return bench.NewLibrary(bench.DefaultSpectra()...) })

// Bench returns a copy of session id's bench, what labmate.bench() in its cells works on: the
// one served while its kernels run, else its workspace's journal replayed, else (a session
// without a workspace yet) an empty deck.
func (s *Runner) Bench(ctx context.Context, id string) (*bench.Deck, error) {
	ss := s.Lookup(id)
	if ss == nil {
		return bench.NewDeck(), nil
	}
	ss.mu.Lock()
	b, ws := ss.bench, ss.ws
	ss.mu.Unlock()
	switch {
	case b != nil:
		return b.Deck(), nil
	case ws != "":
		return benchrun.Open(ctx, ws)
	}
	return bench.NewDeck(), nil
}

// BenchView is GET /v1/sessions/{id}/bench: the session's deck, its labware and wells
// coloured from their composition, for the dashboard's deck and plate maps; and the last
// plate-reader reading of each labware (absorbance per well and wavelength: the spectra),
// those read while the server kept the session, by labware name.
type BenchView struct {
	Labware  []benchrun.LabwareView `json:"labware"`
	Readings []*bench.Reading       `json:"readings,omitempty"`
}

// noteReading keeps the last reading of each labware the session's bench read
// (benchrun.ServeOptions.Note).
func (ss *Session) noteReading(_ bench.Command, ev *bench.Event, err error) {
	if err != nil || ev == nil || ev.Reading == nil {
		return
	}
	ss.readsMu.Lock()
	defer ss.readsMu.Unlock()
	if ss.reads == nil {
		ss.reads = map[string]*bench.Reading{}
	}
	ss.reads[ev.Reading.Labware] = ev.Reading
}

// Readings are the session's last readings, by labware name.
func (s *Runner) Readings(id string) []*bench.Reading {
	ss := s.Lookup(id)
	if ss == nil {
		return nil
	}
	ss.readsMu.Lock()
	defer ss.readsMu.Unlock()
	var out []*bench.Reading
	for _, name := range slices.Sorted(maps.Keys(ss.reads)) {
		out = append(out, ss.reads[name])
	}
	return out
}

// BenchTools are simulate_protocol and bench_state (lab/benchrun) over the server's Python and
// Octave kernels and sessions: bench_state shows the bench of the calling session
// (tool.OriginOf(ctx).Session), what labmate.bench() in its cells works on. Nil when the
// server starts no kernels.
func (s *Runner) BenchTools() []tool.Tool {
	if s.cfg.Kernels == nil {
		return nil
	}
	return benchrun.Tools(&benchrun.ToolsOptions{
		Start: s.cfg.Kernels.Start,
		Workspace: func(ctx context.Context) (string, error) {
			ss := s.Lookup(tool.OriginOf(ctx).Session)
			if ss == nil {
				return "", nil
			}
			ss.mu.Lock()
			defer ss.mu.Unlock()
			return ss.ws, nil
		},
	})
}
