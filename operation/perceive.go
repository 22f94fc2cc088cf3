package operation

import (
	"context"
	"time"

	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

// perceiver is the perceive/Hot-Fix loop of an operation, one for a cell and a job alike. Each
// observation is judged by perception's Monitor, which also reads the telemetry of a printed
// line through its profile (the one place a line becomes telemetry); a verdict the Hot-Fix
// policy acts on stops the run, once; an ambiguous window goes to the Judge beside the stream,
// and its verdict comes back through judged; the observation, its verdict and the telemetry
// read from it are reported. A cell and a job differ only in where observations come from —
// a kernel's Exec and the files the cell writes (Exec), a scheduler's log, states and usage
// (jobFollower) — and in stop: Kernel.Interrupt or Scheduler.Cancel. It is used from one
// goroutine.
type perceiver struct {
	mon    *perception.Monitor
	policy protocol.Hotfix
	// stop interrupts the run on the verdict that triggered the Hot-Fix; it is called once.
	stop func(*protocol.Verdict)
	// report hands a message on; false ends the loop (the consumer left, the log refused it).
	report func(*Message) bool

	judge    perception.Judge
	esc      *perception.Escalator
	judgeCtx context.Context
	judged   chan *protocol.Verdict

	trigger *protocol.Verdict // the verdict that stopped the run
	quiet   bool              // replaying history: judge and act on it, report and escalate nothing
	// passive: another process perceives the run (a job's supervisor): the Monitor only reads
	// telemetry, its verdicts are neither reported nor acted on, and the verdicts reported are
	// that process's (follow).
	passive bool
}

// newPerceiver watches one run as cfg says under policy. The Judge's calls end with ctx.
func newPerceiver(ctx context.Context, cfg *perception.Config, policy protocol.Hotfix, j perception.Judge,
	stop func(*protocol.Verdict), report func(*Message) bool) (*perceiver, error) {
	mon, err := perception.New(cfg)
	if err != nil {
		return nil, err
	}
	return &perceiver{mon: mon, policy: policy, stop: stop, report: report, judge: j,
		esc: &perception.Escalator{Judge: j}, judgeCtx: ctx, judged: make(chan *protocol.Verdict, 1)}, nil
}

// observe judges o, acts on the verdict, and reports o (when log, or when it changed the
// verdict) with the verdict, then each sample of telemetry perception read from it.
func (p *perceiver) observe(o *protocol.Observation, log bool) bool {
	v := p.mon.Observe(o)
	if p.passive {
		v = nil
	}
	p.hotfix(v)
	if !p.quiet && p.esc.Should(v, o.Time) { // a replayed verdict takes no escalation slot
		go judge(p.judgeCtx, p.judge, p.mon.Window(), v, p.judged)
	}
	if p.quiet {
		return true
	}
	if (log || v != nil) && !p.report(&Message{protocol.TypeProgress, &protocol.Progress{Observation: o, Verdict: v}}) {
		return false
	}
	for _, s := range p.mon.Parsed() { // valid until the next Observe: copied
		if s.T != nil {
			t := *s.T
			s.T = &t
		}
		if !p.report(&Message{protocol.TypeProgress, &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsTelemetry, Time: o.Time, Sample: &s}}}) {
			return false
		}
	}
	return true
}

// hotfix stops the run on the first verdict the policy acts on.
func (p *perceiver) hotfix(v *protocol.Verdict) {
	if v != nil && p.trigger == nil && perception.Interrupts(p.policy, v) {
		p.trigger = v
		p.stop(v)
	}
}

// verdict acts on and reports a verdict that came without an observation: the Judge's, or
// the time-based detectors'.
func (p *perceiver) verdict(v *protocol.Verdict) bool {
	p.hotfix(v)
	return p.report(&Message{protocol.TypeProgress, &protocol.Progress{Verdict: v}})
}

// takeJudged takes the Judge's verdict when one is waiting.
func (p *perceiver) takeJudged() bool {
	select {
	case jv := <-p.judged:
		return p.verdict(jv)
	default:
		return true
	}
}

// follow reports v, a verdict another process reached and acted on (passive): the first the
// policy would act on is the trigger, as if this loop had stopped the run.
func (p *perceiver) follow(v *protocol.Verdict) bool {
	if p.trigger == nil && perception.Interrupts(p.policy, v) {
		p.trigger = v
	}
	return p.report(&Message{protocol.TypeProgress, &protocol.Progress{Verdict: v}})
}

// tick runs the time-based detectors at now.
func (p *perceiver) tick(now time.Time) bool {
	if p.passive {
		return true
	}
	if v := p.mon.Tick(now); v != nil {
		return p.verdict(v)
	}
	return true
}

// end reports what perception could not check by the run's end (a watched series that never
// appeared); the run is over, so nothing is stopped.
func (p *perceiver) end() bool {
	if v := p.mon.End(); v != nil && !p.passive {
		return p.report(&Message{protocol.TypeProgress, &protocol.Progress{Verdict: v}})
	}
	return true
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
