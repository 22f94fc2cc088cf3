package agent

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/protocol"
)

const (
	judgeInterval = 30 * time.Second // least time between two judge calls of a run
	maxJudgeCalls = 5                // judge calls per run
)

// judge is the perceive module's model side: perception escalates ambiguous windows to it
// (at most one per operation per perception.DefaultEscalationInterval), and it adds its own
// limits per run — at least judgeInterval between calls and at most maxJudgeCalls — because
// every call costs a model turn. It runs beside the operation, so its calls are recorded here
// and emitted by the run's goroutine (drainJudge).
type judge struct {
	model  llm.Model
	system string

	mu    sync.Mutex
	last  time.Time
	n     int
	calls []*ModuleCall
}

func (j *judge) Judge(ctx context.Context, window []*protocol.Observation, v *protocol.Verdict) (*protocol.Verdict, error) {
	j.mu.Lock()
	now := time.Now()
	if j.n >= maxJudgeCalls || (j.n > 0 && now.Sub(j.last) < judgeInterval) {
		j.mu.Unlock()
		return nil, nil // over the limit: the monitor's verdict stands
	}
	j.n++
	j.last = now
	j.mu.Unlock()

	var b strings.Builder
	fmt.Fprintf(&b, "Perception reports a %s from the %s detector: %s\n", v.State, v.Detector, v.Message)
	for _, e := range v.Evidence {
		fmt.Fprintf(&b, "evidence: %s\n", textcut.Head(e, 200))
	}
	b.WriteString("The most recent observations:\n")
	var lines []string
	for _, o := range window {
		switch {
		case o.Line != "":
			lines = append(lines, fmt.Sprintf("%s: %s", o.Kind, textcut.Head(o.Line, 200)))
		case o.Sample != nil:
			lines = append(lines, fmt.Sprintf("telemetry %s = %g", o.Sample.Name, o.Sample.Value))
		}
	}
	b.WriteString(textcut.HeadTail(strings.Join(lines, "\n"), 12, 3000))
	req := &llm.Request{Module: "perceive", System: j.system, Output: judgeSchema, MaxTokens: 300,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: b.String()}}}
	start := time.Now()
	resp, err := llm.Generate(ctx, j.model, req)
	call := &ModuleCall{Module: "perceive", PromptChars: promptChars(req), Duration: time.Since(start)}
	defer func() {
		j.mu.Lock()
		j.calls = append(j.calls, call)
		j.mu.Unlock()
	}()
	if err != nil {
		call.Error = err.Error()
		return nil, err
	}
	call.Usage = resp.Usage
	var out judgeOut
	if err := decodeOutput(resp.Message.Content, judgeResolved, &out); err != nil {
		call.Error = err.Error()
		return nil, err // a judge that cannot be read leaves the monitor's verdict standing
	}
	jv := &protocol.Verdict{State: protocol.VerdictState(out.State), Detector: "judge", Message: out.Reason, Evidence: v.Evidence}
	switch jv.State {
	case protocol.Error:
		jv.Severity, jv.Action = 0.8, protocol.ActionInterrupt
	case protocol.Warning:
		jv.Severity, jv.Action = 0.4, protocol.ActionAnnotate
	default:
		jv.Action = protocol.ActionContinue
	}
	return jv, nil
}

// take returns the calls made since the last take.
func (j *judge) take() []*ModuleCall {
	j.mu.Lock()
	defer j.mu.Unlock()
	c := j.calls
	j.calls = nil
	return c
}

// promptChars is the size of what a request sends.
func promptChars(req *llm.Request) int {
	n := len(req.System)
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	if req.Output != nil {
		n += len(req.Output.Schema)
	}
	return n
}
