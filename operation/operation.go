// Package operation runs one exec operation end to end: a cell in a live kernel, judged by
// perception while it streams, stopped by its Hot-Fix policy, reported as the protocol's
// messages. The CLI runs operations through it; the server and the agent will too.
package operation

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

// ErrRejected wraps every reason a request cannot run.
var ErrRejected = errors.New("operation: rejected")

// Message is one protocol message of an operation, before it gets an id, a session and a seq.
type Message struct {
	Type    protocol.Type
	Payload any
}

// Plan is a checked exec request: what to run and how to watch it.
type Plan struct {
	Kernel string
	Cell   *kernel.Cell
	Hotfix protocol.Hotfix
	Watch  *perception.Config
}

// Check validates an exec request before anything runs. Its errors wrap ErrRejected and
// name the field and the value at fault.
func Check(req *protocol.Request) (*Plan, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: no request", ErrRejected)
	}
	if req.Kind != "exec" {
		return nil, fmt.Errorf("%w: kind %q: only \"exec\" is supported", ErrRejected, req.Kind)
	}
	if req.Kernel == "" {
		return nil, fmt.Errorf("%w: kernel: missing", ErrRejected)
	}
	if req.TimeoutS < 0 {
		return nil, fmt.Errorf("%w: timeout_s: %v is negative", ErrRejected, req.TimeoutS)
	}
	if req.ExpectSilenceS < 0 {
		return nil, fmt.Errorf("%w: expect_silence_s: %v is negative", ErrRejected, req.ExpectSilenceS)
	}
	p := &Plan{
		Kernel: req.Kernel,
		Cell:   &kernel.Cell{Code: req.Code, Timeout: seconds(req.TimeoutS)},
		Hotfix: req.Hotfix,
		Watch:  &perception.Config{Watch: req.Watch, Expect: perception.Expectation{Silence: seconds(req.ExpectSilenceS)}},
	}
	switch p.Hotfix {
	case "":
		p.Hotfix = protocol.HotfixOnError
	case protocol.HotfixOff, protocol.HotfixOnError, protocol.HotfixOnWarning:
	default:
		return nil, fmt.Errorf("%w: hotfix %q: choose off, on_error or on_warning", ErrRejected, req.Hotfix)
	}
	if err := p.Cell.Validate(); err != nil {
		return nil, fmt.Errorf("%w: code: %w", ErrRejected, err)
	}
	if _, err := perception.New(p.Watch); err != nil {
		return nil, fmt.Errorf("%w: watch: %w", ErrRejected, err)
	}
	return p, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Options are the optional parts of Exec. A nil *Options means none.
type Options struct {
	// Judge, when set, gets ambiguous windows (perception.Ambiguous), rate-limited by a
	// perception.Escalator; its verdict is reported like the monitor's and can trigger the
	// Hot-Fix. It runs beside the stream, never holding it up. With no Judge nothing is escalated.
	Judge perception.Judge
}

// Exec runs a checked plan in k. It yields operation_start, one operation_progress per
// observation — carrying perception's verdict whenever it changes — and exactly one terminal
// message: operation_complete, or operation_failed whose reason is "interrupted" with the
// triggering verdict as evidence when the Hot-Fix policy stopped the run. When the kernel's
// plumbing breaks (a dead or closed kernel) the terminal message is operation_failed with
// reason "error" and the error's text.
func Exec(ctx context.Context, k kernel.Kernel, p *Plan, opts *Options) iter.Seq[*Message] {
	if opts == nil {
		opts = &Options{}
	}
	return func(yield func(*Message) bool) {
		mon, err := perception.New(p.Watch)
		if err != nil { // Check accepted it: cannot happen, but never run unwatched
			yield(&Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonRejected, Error: err.Error()}})
			return
		}
		if !yield(&Message{protocol.TypeStart, &protocol.StatePayload{State: protocol.Started}}) {
			return
		}
		var trigger *protocol.Verdict // the verdict that made the Hot-Fix interrupt
		var res *protocol.Result
		listening := true
		hotfix := func(v *protocol.Verdict) {
			if v != nil && trigger == nil && perception.Interrupts(p.Hotfix, v) {
				trigger = v
				k.Interrupt()
			}
		}
		esc := &perception.Escalator{Judge: opts.Judge}
		judged := make(chan *protocol.Verdict, 1)
		judgeCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		for step, err := range k.Exec(ctx, p.Cell) {
			if err != nil {
				if listening {
					yield(&Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonError, Error: err.Error()}})
				}
				return
			}
			if step.Result != nil {
				res = step.Result
				continue
			}
			v := mon.Observe(step.Observation)
			hotfix(v)
			if esc.Should(v, step.Observation.Time) {
				go judge(judgeCtx, opts.Judge, mon.Window(), v, judged)
			}
			if listening && !yield(&Message{protocol.TypeProgress, &protocol.Progress{Observation: step.Observation, Verdict: v}}) {
				listening = false // stop yielding; the kernel finishes the cell (or is interrupted) below
				k.Interrupt()
			}
			select {
			case jv := <-judged:
				hotfix(jv)
				if listening && !yield(&Message{protocol.TypeProgress, &protocol.Progress{Verdict: jv}}) {
					listening = false
					k.Interrupt()
				}
			default:
			}
		}
		if !listening {
			return
		}
		yield(terminal(res, trigger, mon.Verdict()))
	}
}

// judge asks j about v and hands its verdict back, dropping it when one is still pending.
func judge(ctx context.Context, j perception.Judge, window []*protocol.Observation, v *protocol.Verdict, out chan<- *protocol.Verdict) {
	jv, err := j.Judge(ctx, window, v)
	if err != nil || jv == nil {
		return // a judge that fails leaves the monitor's verdict standing
	}
	if jv.Detector == "" {
		jv.Detector = "judge"
	}
	select {
	case out <- jv:
	default:
	}
}

// terminal reports the result: a hot-fixed run fails as interrupted with the triggering
// verdict; a failed run carries perception's verdict as evidence when it saw something.
func terminal(res *protocol.Result, trigger *protocol.Verdict, final protocol.Verdict) *Message {
	if trigger != nil && (res.Status == protocol.StatusInterrupted || res.Status == protocol.StatusTimeout) {
		return &Message{protocol.TypeFailed, &protocol.Failed{
			Reason:  protocol.ReasonInterrupted,
			Error:   fmt.Sprintf("hot-fix: %s: %s", trigger.Detector, trigger.Message),
			Verdict: trigger,
			Result:  res,
		}}
	}
	t, payload := protocol.Outcome(res)
	if f, ok := payload.(*protocol.Failed); ok && final.State != protocol.Normal {
		f.Verdict = &final
	}
	return &Message{t, payload}
}
