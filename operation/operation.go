// Package operation owns the operation lifecycle and runs exec operations end to end: a cell
// in a live kernel, judged by perception while it streams, stopped by its Hot-Fix policy,
// reported as the protocol's messages — request → ack → start → progress… → terminal —
// written to a Log, each checked against the state machine first (Op, Run). The CLI, the
// server (and through it MCP) and the agent all run their operations through it.
package operation

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
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
	// Follow are the workspace files whose new lines are observed while the cell runs: the
	// request's, and those the code visibly writes its progress to (FollowTargets).
	Follow []string
}

// Check validates an exec request before anything runs. Its errors wrap ErrRejected and
// name the field and the value at fault. It is the one set of rules for an exec, whoever
// sends it: operation.Run checks with it (the agent, labmate exec) and so does the server
// for every request of WebSocket, REST and MCP (Cell.Request) clients.
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
	if strings.TrimSpace(req.Code) == "" {
		return nil, fmt.Errorf("%w: code: empty: send the code to run", ErrRejected)
	}
	if req.TimeoutS < 0 {
		return nil, fmt.Errorf("%w: timeout_s: %v is negative", ErrRejected, req.TimeoutS)
	}
	if req.ExpectSilenceS < 0 {
		return nil, fmt.Errorf("%w: expect_silence_s: %v is negative", ErrRejected, req.ExpectSilenceS)
	}
	profile := perception.ProfileFor(req.Kernel, req.Code)
	if req.Profile != "" {
		var err error
		if profile, err = perception.ParseProfile(req.Profile); err != nil {
			return nil, fmt.Errorf("%w: profile: %w", ErrRejected, err)
		}
	}
	th, err := perception.ParseThresholds(req.Perception)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRejected, err) // "perception: bad config: silence=…"
	}
	if err := checkFollow(req.Follow); err != nil {
		return nil, fmt.Errorf("%w: follow: %w", ErrRejected, err)
	}
	p := &Plan{
		Kernel: req.Kernel,
		Cell:   &kernel.Cell{Code: req.Code, Timeout: seconds(req.TimeoutS)},
		Hotfix: req.Hotfix,
		Watch: &perception.Config{Watch: req.Watch, Expect: perception.Expectation{Silence: seconds(req.ExpectSilenceS)},
			Thresholds: th, Profile: profile, Code: req.Code},
		Follow: withTargets(req.Follow, req.Kernel, req.Code),
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
		// A bad constraint's error names the watch and the column at fault already.
		return nil, fmt.Errorf("%w: %w", ErrRejected, err)
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
	// Artifacts, when set, keeps a copy of every artifact the cell reports (see Keeper).
	Artifacts Keeper
}

// Exec runs a checked plan in k, watched by the perceive loop it shares with jobs (perceiver).
// It yields operation_start, one operation_progress per observation — the kernel's, the lines
// of followed files, and the telemetry perception's profile read from a line — carrying
// perception's verdict whenever it changes, one per file the cell created or changed in its
// workspace (an artifact, see artifacts.go) after the cell's end, and exactly one terminal
// message.
//
// The verdict decides the outcome: when the Hot-Fix policy acted on an Error (or, under
// on_warning, a Warning) seen before the cell's end, the terminal message is operation_failed
// with reason "interrupted" and that verdict as evidence — also when the cell finished on its
// own before the interrupt took hold (a violation on one of its last lines), since its
// result is still the one the verdict condemned. A crash, and a cell whose own error message
// triggered the Hot-Fix, keep their reason, with perception's verdict attached. Otherwise the terminal
// message is operation_complete, or operation_failed as the kernel's result says. When the
// kernel's plumbing breaks (a dead or closed kernel) it is operation_failed with reason
// "error" and the error's text.
func Exec(ctx context.Context, k kernel.Kernel, p *Plan, opts *Options) iter.Seq[*Message] {
	if opts == nil {
		opts = &Options{}
	}
	return func(yield func(*Message) bool) {
		var res *protocol.Result
		listening := true
		send := func(m *Message) bool {
			if listening && !yield(m) {
				listening = false // stop yielding; the kernel finishes the cell (or is interrupted) below
				k.Interrupt()
			}
			return true // the cell runs to its end (or its interrupt) whoever listens
		}
		judgeCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		per, err := newPerceiver(judgeCtx, p.Watch, p.Hotfix, opts.Judge, func(*protocol.Verdict) { k.Interrupt() }, send)
		if err != nil { // Check accepted it: cannot happen, but never run unwatched
			yield(&Message{protocol.TypeFailed, &protocol.Failed{Reason: protocol.ReasonRejected, Error: err.Error()}})
			return
		}
		if !yield(&Message{protocol.TypeStart, &protocol.StatePayload{State: protocol.Started}}) {
			return
		}
		observe := func(o *protocol.Observation) { per.observe(o, true) }
		fol := newFollower(k.Info().Workspace, p.Follow)
		defer fol.close()
		snap := takeSnapshot(k.Info().Workspace, opts.Artifacts)
		defer snap.close()
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
			observe(step.Observation)
			if now := time.Now(); fol.due(now) {
				fol.poll(now, false, observe)
			}
			per.takeJudged()
		}
		fol.poll(time.Now(), true, observe) // what the files gained up to the cell's end
		per.takeJudged()
		for _, a := range snap.artifacts() {
			send(artifactMessage(a))
		}
		per.end()
		if !listening {
			return
		}
		yield(terminal(res, per.trigger, per.mon.Verdict()))
	}
}

// terminal reports the result. A run the Hot-Fix acted on fails as interrupted with the
// triggering verdict — whether the interrupt stopped it, a timeout came first, the cell had
// just finished by itself, or it failed while the interrupt was on its way (a shell cell's
// command killed by the SIGINT exits 130; pw.x may exit on its own error first): the verdict
// was seen before the end, and it decides. Two failures keep their own reason: a crash (the
// workspace is lost, which the agent must know), and an error whose own message is what
// triggered the Hot-Fix (an Octave `error:`, a Python traceback: the cell stopped itself).
// A failed run carries perception's verdict as evidence when it saw something.
func terminal(res *protocol.Result, trigger *protocol.Verdict, final protocol.Verdict) *Message {
	ownFailure := res.Status == protocol.StatusCrashed ||
		res.Status == protocol.StatusError && trigger != nil && trigger.Detector == perception.DetectorLanguage
	if trigger != nil && !ownFailure {
		msg := fmt.Sprintf("hot-fix: %s: %s", trigger.Detector, trigger.Message)
		if res.Status == protocol.StatusOK {
			msg += " (the cell finished before the interrupt took hold; its result is not to be trusted)"
		}
		return &Message{protocol.TypeFailed, &protocol.Failed{
			Reason:  protocol.ReasonInterrupted,
			Error:   msg,
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
