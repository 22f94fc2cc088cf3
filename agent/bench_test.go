package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/tool"
)

// BenchmarkTurnOverhead measures what the agent itself spends per turn — building the prompt,
// dispatching and validating the tool call, emitting and checkpointing the events in SQLite —
// excluding the model's latency (each call's round trip to the fake server is subtracted). Each
// run is a plan and 20 code turns calling a cheap tool, then the answer.
func BenchmarkTurnOverhead(b *testing.B) {
	const turns = 20
	note := tool.Must("note", "Write down a note.", func(ctx context.Context, in struct {
		Text string `json:"text"`
	}) (string, error) {
		return "noted: " + in.Text, nil
	})
	set, err := tool.NewSet(note)
	if err != nil {
		b.Fatal(err)
	}
	store := checkpoints(b)
	script := []llmtest.Turn{llmtest.JSON(agent.Plan{Goal: "g", Steps: []agent.Step{{Title: "notes", Action: "take notes", Tool: "note", Checkpoint: "20 notes"}}})}
	for range turns {
		script = append(script, llmtest.CallTool("note", `{"text": "the residual is 1.2e-9 after 14 iterations"}`))
	}
	script = append(script, agenttest.FinalAnswer("done"))
	var overhead time.Duration
	var n int
	for b.Loop() {
		srv := llmtest.NewServer(b, script...)
		a, err := agent.New(openAIModel(srv), &agent.Options{Tools: set, Store: store, MaxTurns: 100})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		var model time.Duration
		var calls int
		for ev, err := range a.Run(context.Background(), &agent.Task{Goal: "take 20 notes"}) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Type == agent.EventModelCall {
				model += ev.Call.Duration
				calls++
			}
			if ev.Type == agent.EventStop && ev.Stop.Reason != agent.StopAnswered {
				b.Fatalf("stopped: %+v", ev.Stop)
			}
		}
		overhead += time.Since(start) - model
		n += calls
		srv.Close()
	}
	b.ReportMetric(float64(overhead.Nanoseconds())/float64(n), "overhead-ns/turn")
	b.ReportMetric(0, "ns/op")
}
