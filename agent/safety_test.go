package agent_test

import (
	"strings"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/agent/agenttest"
	"github.com/labmate/labmate/llm/llmtest"
)

// A task naming a controlled substance stops before planning, saying which, and the model
// is never called; an ordinary task with the same model goes on.
func TestRefusesHazardousTasks(t *testing.T) {
	srv := llmtest.NewServer(t, agenttest.FinalAnswer("unused"))
	a, err := agent.New(openAIModel(srv), &agent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []agent.Mode{agent.ModeAgent, agent.ModeDirect, agent.ModeCodeAct} {
		evs, err := run(t, a, &agent.Task{Goal: "Plan a synthesis of Nitro-glycerine at 10 g scale.", Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		stops := of(evs, agent.EventStop)
		if len(stops) != 1 || stops[0].Stop.Reason != agent.StopRefused || !strings.Contains(stops[0].Stop.Error, "nitroglycerin") ||
			!strings.Contains(stops[0].Stop.Error, "explosive") {
			t.Fatalf("%s: stops = %+v, want one refused naming nitroglycerin", mode, stops)
		}
		if n := len(srv.Calls()); n != 0 {
			t.Fatalf("%s: the model was called %d times for a refused task", mode, n)
		}
	}
	evs, err := run(t, a, &agent.Task{Goal: "How many grams of sodium chloride make 1 L of 0.9% saline?", Mode: agent.ModeDirect})
	if err != nil {
		t.Fatal(err)
	}
	if stops := of(evs, agent.EventStop); len(stops) != 1 || stops[0].Stop.Reason != agent.StopAnswered || len(srv.Calls()) != 1 {
		t.Errorf("an ordinary task: stops %+v after %d model calls, want answered after 1", stops, len(srv.Calls()))
	}
}
