package perception

import (
	"context"
	"time"

	"github.com/labmate/labmate/protocol"
)

// Judge gives a second opinion on an ambiguous window of observations — typically an LLM
// that reads the code's output the way a person would. It returns its own verdict (it may
// confirm v, raise it to Error or lower it to Normal). The agent plugs one in; perception only
// defines the hook.
type Judge interface {
	Judge(ctx context.Context, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error)
}

// Ambiguous reports whether v is worth a judge's opinion: a Warning from any detector but
// resources. Errors are clear enough to act on (and judging them would delay the interrupt);
// Normal needs no opinion; resource pressure is a measurement, not an interpretation. What is
// left is where the detectors are unsure by design: exponential growth that may still
// saturate, a nearly singular matrix, an iterative solver that stopped short of its
// tolerance, a long busy silence, an Octave or numpy warning.
func Ambiguous(v *protocol.Verdict) bool {
	return v != nil && v.State == protocol.Warning && v.Detector != DetectorResources
}

// DefaultEscalationInterval is the least time between two escalations of one operation.
const DefaultEscalationInterval = 30 * time.Second

// Escalator hands ambiguous verdicts to a Judge, rate-limited: at most one escalation per
// Interval (default 30 s) per operation, because a judge costs a model call and the same
// warning tends to recur. With no Judge nothing is escalated. Like Monitor it is meant for one
// operation and is not safe for concurrent use.
type Escalator struct {
	Judge    Judge         // nil: never escalate
	Interval time.Duration // least time between escalations; zero = DefaultEscalationInterval

	last time.Time
	done bool // at least one escalation happened
}

// Should reports whether v, seen at now, is to be escalated, and if so records the escalation.
func (e *Escalator) Should(v *protocol.Verdict, now time.Time) bool {
	if e == nil || e.Judge == nil || !Ambiguous(v) {
		return false
	}
	every := e.Interval
	if every <= 0 {
		every = DefaultEscalationInterval
	}
	if e.done && now.Sub(e.last) < every {
		return false
	}
	e.last, e.done = now, true
	return true
}

// Escalate asks the Judge about v with window as context when Should allows it. It returns the
// judge's verdict, or nil when v was not escalated.
func (e *Escalator) Escalate(ctx context.Context, now time.Time, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error) {
	if !e.Should(v, now) {
		return nil, nil
	}
	return e.Judge.Judge(ctx, window, v)
}
