package perception

import (
	"fmt"
	"time"

	"github.com/labmate/labmate/protocol"
)

// crawl reports an ODE integrator crawling: its step size collapsed while the simulation time
// barely moves — an explicit method (RK45, Euler with error control, dopri) on a problem that
// became stiff, or any method approaching a singularity. Such a run does not fail; it just
// spends ever more function evaluations per unit of t (`t = 1e-3 step = 1e-9 nfev = 500000`)
// until the timeout. The series judged are step sizes, named h, dt, step, step_size, stepsize,
// hstep, h_step or dt_step, that carry a simulation time (printed on the same line as t or
// time, logged with t, or a table with a t column). It is an Error when, for at least
// CrawlFor (1 s) of wall time and 20 samples in a row:
//
//   - the step is StepCollapse (10⁴) times or more below the largest step the series had, and
//   - the step is at most 10⁻⁵ of |t|: doubling t would take a hundred thousand steps.
//
// An implicit method crossing a sharp transient shrinks its step by as much, but for a few
// dozen or hundred steps — well under a second at the pace anyone prints —, then grows it back; a step that was always small (a fixed dt, an explicit
// method held at its stability limit from the start) did not collapse. Integer-valued
// counters named step only grow, so they never collapse.
type crawlState struct {
	hmax     float64
	in       bool
	since    time.Time
	t0       float64
	n        int
	reported bool
}

const (
	crawlSamples = 20
	crawlRatio   = 1e-5 // step / |t| at or below which t crawls
)

func (m *Monitor) crawl(now time.Time, sr *series, s *protocol.Sample) {
	c := &sr.crawl
	if c.reported || s.T == nil || len(s.Values) > 0 {
		return
	}
	h, t := abs(s.Value), *s.T
	if h == 0 || now.IsZero() {
		return
	}
	c.hmax = max(c.hmax, h)
	if h*m.th.StepCollapse > c.hmax || h > crawlRatio*abs(t) {
		c.in = false
		return
	}
	if !c.in {
		c.in, c.since, c.t0, c.n = true, now, t, 0 // a stretch of crawling starts here
	}
	c.n++
	if c.n < crawlSamples || now.Sub(c.since) < m.th.CrawlFor {
		return
	}
	c.reported = true
	m.raise(detStagnation, finding{
		state: protocol.Error,
		message: fmt.Sprintf("integrator crawling: %s = %s is %s of its largest step (%s) and t moved %s in %s",
			sr.label(), num(h), num(h/c.hmax), num(c.hmax), num(t-c.t0), now.Sub(c.since).Round(100*time.Millisecond)),
		evidence: fmt.Sprintf("%s = %s at t=%s", sr.label(), num(h), num(t)),
		severity: 0.8,
	})
}
