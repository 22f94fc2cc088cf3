package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
)

// TestDashboardRun: an agent run started over the API is watched in a real headless Chromium
// from its session: the task, the plan, the operation as a card of its own with its output and
// its telemetry chart, the reflection, the answer and the stop with its tokens per module.
func TestDashboardRun(t *testing.T) {
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "sum", Steps: []agent.Step{{Title: "sum", Action: "compute 2 + 3", Tool: agent.ToolRunCode, Checkpoint: "s = 5"}}}),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "for i in range(6):\n    print('s =', i)"}`),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "s reached 5", "summary": "s = 5"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "5"}`),
	)
	f := runFixture(t, fake)
	resp, err := http.Post(f.http.URL+"/v1/runs", "application/json", strings.NewReader(`{"goal": "What is 2 + 3?", "kernel": "python"}`))
	if err != nil {
		t.Fatal(err)
	}
	var started struct{ ID string }
	json.NewDecoder(resp.Body).Decode(&started)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || started.ID == "" {
		t.Fatalf("POST /v1/runs: %d %+v", resp.StatusCode, started)
	}
	ctx := browser(t, time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/#lab/"+started.ID)); err != nil {
		t.Fatal(err)
	}
	const stream = `document.querySelector("#stream").innerText`
	waitJS(t, ctx, "the run's story arrives", stream+`.includes("answer: 5") && `+stream+`.includes("stopped: answered")`)
	for _, want := range []string{"What is 2 + 3?", "plan: sum", "sum [run_code] — check: s = 5", "s = 5", "reflect, step 1: accept — s reached 5", "tokens: plan "} {
		if got := evalString(t, ctx, stream); !strings.Contains(got, want) {
			t.Errorf("the run's stream lacks %q:\n%s", want, got)
		}
	}
	waitJS(t, ctx, "the operation is a card of its own, completed, with its chart",
		`[...document.querySelectorAll("#stream article.op")].some((a) => a.innerText.includes("completed in") && a.querySelector('figure.chart[data-series="s"]'))`)
	screenshot(t, ctx, "run.png")
}
