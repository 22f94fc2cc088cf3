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

// TestDashboardRunErrorOnce: a run that stops on an error (its provider failing for good)
// shows that error once in its session's view — in its story — not again in the run card's
// end nor in the story's "ended" line.
func TestDashboardRunErrorOnce(t *testing.T) {
	overloaded := llmtest.Fail(529, "Overloaded")
	overloaded.RetryAfter = 10 * time.Millisecond
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "sum", Steps: []agent.Step{{Title: "sum", Action: "compute 2 + 3", Tool: agent.ToolRunCode, Checkpoint: "s = 5"}}}),
		overloaded, overloaded, overloaded, overloaded,
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
	waitJS(t, ctx, "the run ends", `[...document.querySelectorAll("#stream .end")].some((e) => e.textContent.startsWith("ended (error)"))`)
	time.Sleep(300 * time.Millisecond) // anything rendered after the end
	got := evalString(t, ctx, stream)
	if n := strings.Count(got, "HTTP 529"); n != 1 {
		t.Errorf("the run's error is shown %d times, want once:\n%s", n, got)
	}
}
