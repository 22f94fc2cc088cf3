package perception

import (
	"testing"
	"time"

	"github.com/labmate/labmate/protocol"
)

// t0 is the start of every synthetic stream.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// ts is t0 plus sec seconds.
func ts(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func stdout(sec float64, line string) *protocol.Observation {
	return &protocol.Observation{Kind: protocol.ObsStdout, Time: ts(sec), Line: line}
}

func stderr(sec float64, line string) *protocol.Observation {
	return &protocol.Observation{Kind: protocol.ObsStderr, Time: ts(sec), Line: line}
}

func tel(sec float64, name string, v float64) *protocol.Observation {
	return &protocol.Observation{Kind: protocol.ObsTelemetry, Time: ts(sec),
		Sample: &protocol.Sample{Name: name, Value: v, Source: protocol.FromHelper}}
}

func telVec(sec float64, name string, vs ...float64) *protocol.Observation {
	return &protocol.Observation{Kind: protocol.ObsTelemetry, Time: ts(sec),
		Sample: &protocol.Sample{Name: name, Value: vs[0], Values: vs, Source: protocol.FromHelper}}
}

func printed(sec float64, name string, v float64) *protocol.Observation {
	o := tel(sec, name, v)
	o.Sample.Source = protocol.FromStdout
	return o
}

func resource(sec, cpu float64, rss, memLimit int64) *protocol.Observation {
	return &protocol.Observation{Kind: protocol.ObsResource, Time: ts(sec),
		Resource: &protocol.Resource{CPUSeconds: cpu, RSSBytes: rss, WallSeconds: sec, MemoryLimit: memLimit}}
}

func event(sec float64, name protocol.EventName) *protocol.Observation {
	return &protocol.Observation{Kind: protocol.ObsEvent, Time: ts(sec), Event: &protocol.Event{Name: name}}
}

// series builds one helper sample per value, dt seconds apart.
func seriesObs(name string, dt float64, vs []float64) []*protocol.Observation {
	out := make([]*protocol.Observation, len(vs))
	for i, v := range vs {
		out[i] = tel(float64(i)*dt, name, v)
	}
	return out
}

// emitted is one verdict Observe returned, with the index of the observation that caused it.
type emitted struct {
	At       int
	State    protocol.VerdictState
	Detector string
}

func newMonitor(t testing.TB, cfg *Config) *Monitor {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// feed runs obs through m and returns the verdicts it emitted.
func feed(m *Monitor, obs []*protocol.Observation) []emitted {
	var out []emitted
	for i, o := range obs {
		if v := m.Observe(o); v != nil {
			out = append(out, emitted{i, v.State, v.Detector})
		}
	}
	return out
}

// firstAlarm is the first non-Normal verdict m emits on obs, or the zero emitted.
func firstAlarm(t testing.TB, cfg *Config, obs []*protocol.Observation) emitted {
	t.Helper()
	for _, e := range feed(newMonitor(t, cfg), obs) {
		if e.State != protocol.Normal {
			return e
		}
	}
	return emitted{}
}

// geometric returns n values a·r^i.
func geometric(a, r float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = a
		a *= r
	}
	return out
}
