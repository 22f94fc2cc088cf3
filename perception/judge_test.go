package perception

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/labmate/labmate/protocol"
)

// judgeFunc adapts a function to Judge.
type judgeFunc func(ctx context.Context, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error)

func (f judgeFunc) Judge(ctx context.Context, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error) {
	return f(ctx, window, v)
}

func TestAmbiguous(t *testing.T) {
	tests := []struct {
		v    *protocol.Verdict
		want bool
	}{
		{nil, false},
		{&protocol.Verdict{State: protocol.Normal}, false},
		{&protocol.Verdict{State: protocol.Error, Detector: DetectorDivergence}, false},
		{&protocol.Verdict{State: protocol.Warning, Detector: DetectorDivergence}, true},
		{&protocol.Verdict{State: protocol.Warning, Detector: DetectorLanguage}, true},
		{&protocol.Verdict{State: protocol.Warning, Detector: DetectorStagnation}, true},
		{&protocol.Verdict{State: protocol.Warning, Detector: DetectorResources}, false},
	}
	for _, tt := range tests {
		if got := Ambiguous(tt.v); got != tt.want {
			t.Errorf("Ambiguous(%+v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

func TestEscalator(t *testing.T) {
	warn := &protocol.Verdict{State: protocol.Warning, Detector: DetectorDivergence, Message: "y grows exponentially"}
	var calls []string
	judge := judgeFunc(func(_ context.Context, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error) {
		calls = append(calls, v.Message)
		return &protocol.Verdict{State: protocol.Error, Detector: v.Detector, Message: "judge: diverging", Action: protocol.ActionInterrupt}, nil
	})

	var none Escalator // no judge: nothing is escalated
	if v, err := none.Escalate(context.Background(), ts(0), nil, warn); v != nil || err != nil {
		t.Errorf("Escalate without a judge = %+v, %v", v, err)
	}

	e := &Escalator{Judge: judge, Interval: 10 * time.Second}
	steps := []struct {
		at   float64
		v    *protocol.Verdict
		want bool
	}{
		{0, &protocol.Verdict{State: protocol.Error, Detector: DetectorNonFinite}, false},
		{1, warn, true},
		{10.9, warn, false}, // rate-limited
		{11, warn, true},
		{12, &protocol.Verdict{State: protocol.Warning, Detector: DetectorResources}, false},
	}
	for _, s := range steps {
		v, err := e.Escalate(context.Background(), ts(s.at), nil, s.v)
		if err != nil {
			t.Fatal(err)
		}
		if got := v != nil; got != s.want {
			t.Errorf("at %v s: escalated = %v, want %v", s.at, got, s.want)
		}
		if v != nil && v.Message != "judge: diverging" {
			t.Errorf("at %v s: verdict %+v, want the judge's", s.at, v)
		}
	}
	if diff := cmp.Diff([]string{"y grows exponentially", "y grows exponentially"}, calls); diff != "" {
		t.Errorf("judge calls mismatch (-want +got):\n%s", diff)
	}

	d := &Escalator{Judge: judge} // default interval
	if !d.Should(warn, ts(0)) || d.Should(warn, ts(29)) || !d.Should(warn, ts(30)) {
		t.Error("the default interval is not 30 s")
	}
}

// TestEscalatorWithMonitor: the monitor's Warning and recent window go to the judge.
func TestEscalatorWithMonitor(t *testing.T) {
	m := newMonitor(t, nil)
	var gotWindow int
	e := &Escalator{Judge: judgeFunc(func(_ context.Context, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error) {
		gotWindow = len(window)
		return v, nil
	})}
	for i, o := range seriesObs("y", 0.1, geometric(1, 1.7, 20)) {
		if v := m.Observe(o); v != nil {
			j, err := e.Escalate(context.Background(), o.Time, m.Window(), v)
			if err != nil || j == nil {
				t.Fatalf("sample %d: Escalate(%+v) = %+v, %v", i, v, j, err)
			}
		}
	}
	if gotWindow != 16 { // the Warning comes with the 16th sample: a full window
		t.Errorf("the judge saw %d observations, want 16", gotWindow)
	}
}
