package report

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

// Follow follows job st to its end, as labmate job wait and labmate job logs -f do: it prints
// the job's log lines after line after on lines (nil: none), and — unless the job's spec says
// hotfix off — watches it with perception as the server would (operation.WatchJob), or, when
// a supervisor watches the job where it runs (job.Supervised), reads that one's verdicts, saying
// on info each verdict that is not Normal as it comes (but the one that stops it). A verdict the hotfix acts on cancels
// the job with the verdict as the reason; Follow then returns that verdict. The error is ctx's
// or the scheduler's; the job's state is the scheduler's to tell (Status) once Follow returns.
func Follow(ctx context.Context, s job.Scheduler, st *job.Status, after int64, lines *Lines, info io.Writer) (*protocol.Verdict, error) {
	if st.Spec == nil || st.Spec.Hotfix == protocol.HotfixOff || st.State.Terminal() {
		return nil, follow(ctx, s, st.ID, after, lines)
	}
	hotfix, last := st.Spec.Hotfix, ""
	if hotfix == "" {
		hotfix = protocol.HotfixOnError
	}
	if sv, ok := s.(job.Supervised); ok && sv.Supervised(ctx, st.ID) {
		return followSupervised(ctx, s, sv, st.ID, after, lines, info, hotfix)
	}
	for m, err := range operation.WatchJob(ctx, s, st.ID, st.Spec, after, nil) {
		if err != nil {
			return nil, err
		}
		switch p := m.Payload.(type) {
		case *protocol.Progress:
			if l := operation.JobLine(p.Observation); l != nil && lines != nil {
				if err := lines.Line(l); err != nil {
					return nil, err
				}
			}
			// The verdict that stops the job is said once, by the caller (Stopped).
			if v := p.Verdict; v != nil && v.State != protocol.Normal && !perception.Interrupts(hotfix, v) {
				if s := Verdict(v); s != last {
					last = s
					fmt.Fprintln(info, "labmate: perception:", s)
				}
			}
		case *protocol.Failed:
			if p.Reason == protocol.ReasonInterrupted && p.Verdict != nil {
				return p.Verdict, nil
			}
		}
	}
	return nil, nil
}

// follow follows a job without perception: its lines, or only its states when lines is nil.
func follow(ctx context.Context, s job.Scheduler, id job.ID, after int64, lines *Lines) error {
	if lines == nil {
		for _, err := range s.Watch(ctx, id) {
			if err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	for ln, err := range s.Logs(ctx, id, after, true) {
		if err != nil {
			return err
		}
		if err := lines.Line(ln); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Verdict is one line saying a verdict of perception: "Error · divergence: residual grew 1e6×".
func Verdict(v *protocol.Verdict) string {
	return fmt.Sprintf("%s · %s: %s", v.State, v.Detector, v.Message)
}

// Stopped says, for stderr, that perception stopped job id and why.
func Stopped(id job.ID, v *protocol.Verdict) string {
	return fmt.Sprintf("perception stopped job %s: %s: %s", id, v.Detector, v.Message)
}

// followSupervised follows a job its supervisor watches: its lines (on lines, when not nil) and
// states, and the verdicts the supervisor records, said on info as they come (but the one the
// hotfix acts on). It returns the verdict the supervisor stopped the job with, nil when it did
// not.
func followSupervised(ctx context.Context, s job.Scheduler, sv job.Supervised, id job.ID, after int64, lines *Lines, info io.Writer, hotfix protocol.Hotfix) (*protocol.Verdict, error) {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- follow(fctx, s, id, after, lines) }()
	seen, last := 0, ""
	show := func() []*protocol.Verdict {
		vs, err := sv.Verdicts(ctx, id)
		if err != nil {
			return nil
		}
		for _, v := range vs[min(seen, len(vs)):] {
			if v.State == protocol.Normal || perception.Interrupts(hotfix, v) {
				continue
			}
			if s := Verdict(v); s != last {
				last = s
				fmt.Fprintln(info, "labmate: perception:", s)
			}
		}
		seen = len(vs)
		return vs
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			vs := show()
			if err != nil {
				return nil, err
			}
			st, err := s.Status(ctx, id)
			if err != nil {
				return nil, err
			}
			if st.State != job.Cancelled {
				return nil, nil
			}
			for _, v := range vs {
				if st.Reason == cancelReason(v) {
					return v, nil
				}
			}
			return nil, nil
		case <-tick.C:
			show()
		}
	}
}

// cancelReason is the reason a Hot-Fix cancels a job with (operation's job follower).
func cancelReason(v *protocol.Verdict) string {
	return fmt.Sprintf("perception: %s: %s", v.Detector, v.Message)
}
