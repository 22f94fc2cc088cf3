package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
)

// TestDashboardInterruptAgentCell: an agent run's cells are operations of the run's session. In
// a real headless Chromium, the Interrupt button on the card of the run's running cell stops
// that operation — the log has it, under the run's session, interrupted from the dashboard —
// and the run repairs it (the scripted model's next cell runs) and answers. The run's page is
// its timeline: the plan, the step, every model answer (folded), every cell with its stream
// and its figure, the repair, the reflection and the answer, and no cell form.
func TestDashboardInterruptAgentCell(t *testing.T) {
	long := "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
	fixed := "import base64\nopen('dot.png', 'wb').write(base64.b64decode('" +
		"iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg=='))\nprint('total =', 42)"
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "total", Steps: []agent.Step{{Title: "count", Action: "count to the total", Tool: agent.ToolRunCode, Checkpoint: "total = 42"}}}),
		llmtest.CallTool(agent.ToolRunCode, fmt.Sprintf(`{"code": %q}`, long)),
		// After the interrupt: the repair.
		llmtest.CallTool(agent.ToolRunCode, fmt.Sprintf(`{"code": %q}`, fixed)),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "total = 42", "summary": "total = 42"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "42"}`),
	)
	f := runFixture(t, fake)
	code, id := post(t, f, "/v1/runs", `{"goal": "Count to the total", "kernel": "python"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", code, id)
	}
	ctx := browser(t, 2*time.Minute)
	if err := chromedp.Do(ctx, chromedp.Navigate(f.http.URL+"/#lab/"+id)); err != nil {
		t.Fatal(err)
	}
	const stream = `document.querySelector("#stream").innerText`
	card := func(code string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("#stream article.op")].find((a) => a.querySelector("pre.code").textContent.includes(%q))`, code)
	}
	longCard := card("range(600)")
	waitJS(t, ctx, "the run's long cell runs, its Interrupt offered", `!!`+longCard+` && `+longCard+`.innerText.includes("tick 3") && !`+longCard+`.querySelector("button.danger").hidden`)
	cell := strings.TrimPrefix(evalString(t, ctx, longCard+`.id`), "op-")
	jsClick(t, ctx, fmt.Sprintf(`#op-%s button.danger`, cell))
	waitJS(t, ctx, "the cell is shown interrupted", longCard+`.querySelector(".badge.s-interrupted") !== null && `+longCard+`.innerText.includes("interrupted after")`)
	fixedCard := card("dot.png")
	waitJS(t, ctx, "the run repairs the cell and answers", `!!`+fixedCard+` && `+fixedCard+`.innerText.includes("total = 42") && `+
		stream+`.includes("answer: 42") && `+stream+`.includes("stopped: answered") && document.querySelector("#run-status").textContent.includes("ended (answered)")`)

	// The log: the cell is an operation of the run's session, interrupted from the dashboard;
	// the repair is another, completed.
	bg := context.Background()
	infos, err := f.store.Operations(bg, id)
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]protocol.State{}
	for _, op := range infos {
		states[op.ID] = op.State
	}
	if states[cell] != protocol.FailedState || !states[id].Terminal() {
		t.Errorf("the log's operations of the run's session: %+v; want the cell %s ended", infos, cell)
	}
	var why string
	var end protocol.Failed
	for m, err := range f.store.Operation(bg, id, cell) {
		if err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case protocol.TypeInterrupt:
			var in protocol.Interrupt
			m.Decode(&in)
			why = in.Why
		case protocol.TypeFailed:
			m.Decode(&end)
		}
	}
	if why != "interrupted from the dashboard" || end.Reason != protocol.ReasonInterrupted || end.Verdict != nil {
		t.Errorf("the cell's operation in the log: interrupt %q, end %+v; want the dashboard's interrupt and an interrupted end", why, end)
	}
	completed := 0
	for opID, st := range states {
		if opID != id && opID != cell && st == protocol.Completed {
			completed++
		}
	}
	if completed != 1 {
		t.Errorf("%d completed repairs in the run's session, want 1: %+v", completed, infos)
	}

	// The page is the run's timeline.
	if shown := evalString(t, ctx, `String(shown("#cell"))`); shown != "false" {
		t.Error("an agent run's page shows the cell form")
	}
	for _, want := range []string{"plan: total", "count [run_code] — check: total = 42", "step 1 of 1: count", "cell interrupted: repair 1",
		"reflect, step 1: accept — total = 42", "answer: 42", "stopped: answered"} {
		if got := evalString(t, ctx, stream); !strings.Contains(got, want) {
			t.Errorf("the run's page lacks %q:\n%s", want, got)
		}
	}
	answers := evalString(t, ctx, `[...document.querySelectorAll("#stream details.run-line.model")].map((d) => d.querySelector("summary").textContent.replace(/,.*$/, "") + " | " + d.querySelector("pre.reply").textContent.replace(/\s+/g, " ").slice(0, 40)).join("\n")`)
	want := []string{`model · plan | {"goal":"total"`, `model · code | → run_code({"code": "import time`, `model · code | → run_code({"code": "import base64`,
		`model · reflect | {"decision":"accept"`, `model · code | → final_answer({"answer": "42"})`}
	if lines := strings.Split(answers, "\n"); len(lines) != len(want) {
		t.Errorf("the page shows %d model answers, want %d:\n%s", len(lines), len(want), answers)
	} else {
		for i, w := range want {
			if !strings.HasPrefix(lines[i], w) {
				t.Errorf("model answer %d: %q, want %q", i+1, lines[i], w)
			}
		}
	}
	if got := evalString(t, ctx, `[...document.querySelectorAll("#stream article.op.run-cell")].map((a) => a.id.slice(3) + " " + a.dataset.step).join(",")`); strings.Count(got, " 1") != 2 || !strings.Contains(got, cell) {
		t.Errorf("the run's cells on the page: %q, want both, each marked with its step", got)
	}
	waitJS(t, ctx, "the repair's figure is shown in its card", fixedCard+`.querySelector('figure.artifact img[alt="figure dot.png"]')?.naturalWidth === 2`)
	// The step's heading comes before its cells, the repair line between them.
	order := evalString(t, ctx, `(() => { const s = [...document.querySelectorAll("#stream > *")]; `+
		`const at = (f) => s.findIndex(f); `+
		`return [at((e) => e.matches("h4.run-step")), at((e) => e.id === "op-`+cell+`"), at((e) => e.matches(".run-line.repair")), s.indexOf(`+fixedCard+`)].join(","); })()`)
	var h, c1, r, c2 int
	if _, err := fmt.Sscanf(order, "%d,%d,%d,%d", &h, &c1, &r, &c2); err != nil || !(0 <= h && h < c1 && c1 < r && r < c2) {
		t.Errorf("the timeline's order (step heading, cell, repair, repaired cell): %s", order)
	}
	screenshot(t, ctx, "run-interrupt-cell.png")
}

// An agent run's running cell is interrupted over REST (POST
// /v1/sessions/RUN/operations/OP/interrupt), by the id its run's events name: the operation
// ends interrupted, the agent reads that result and repairs the cell, and the run answers.
// The run's event stream reports the cells' messages as operation lines.
func TestInterruptAgentCellOverREST(t *testing.T) {
	long := "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
	fake := llmtest.NewServer(t,
		llmtest.JSON(agent.Plan{Goal: "t", Steps: []agent.Step{{Title: "t", Action: "count", Tool: agent.ToolRunCode, Checkpoint: "t = 7"}}}),
		llmtest.CallTool(agent.ToolRunCode, fmt.Sprintf(`{"code": %q}`, long)),
		llmtest.CallTool(agent.ToolRunCode, `{"code": "print('t =', 7)"}`),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "t = 7", "summary": "t = 7"}),
		llmtest.CallTool(agent.ToolFinalAnswer, `{"answer": "7"}`),
	)
	f := runFixture(t, fake)
	code, id := post(t, f, "/v1/runs", `{"goal": "count to t", "kernel": "python"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST /v1/runs: %d %s", code, id)
	}
	var cell string
	lines := followEvents(t, f, id, 0, func(l *line) {
		if l.Type == agent.EventCell && cell == "" {
			cell = l.Cell.ID
		}
		if l.Type == agent.EventOperation && l.Message.OperationID == cell && l.Message.Type == protocol.TypeProgress {
			var p protocol.Progress
			if l.Message.Decode(&p) == nil && p.Observation != nil && p.Observation.Line == "tick 2" {
				if code, msg := post(t, f, "/v1/sessions/"+id+"/operations/"+cell+"/interrupt", `{"why": "a person asked"}`); code != http.StatusAccepted && code != http.StatusOK {
					t.Errorf("interrupting the run's cell: %d %s", code, msg)
				}
			}
		}
	})
	var end *protocol.Failed
	repaired := false
	for _, l := range lines {
		if l.Type != agent.EventOperation {
			continue
		}
		switch {
		case l.Message.OperationID == cell && l.Message.Type == protocol.TypeFailed:
			end = &protocol.Failed{}
			l.Message.Decode(end)
		case l.Message.OperationID != cell && l.Message.Type == protocol.TypeComplete:
			repaired = true
		}
	}
	if cell == "" || end == nil || end.Reason != protocol.ReasonInterrupted || end.Verdict != nil {
		t.Fatalf("the run's cell %q ended %+v, want interrupted by the request", cell, end)
	}
	last := lines[len(lines)-1]
	if !repaired || last.Type != agent.EventStop || last.Stop.Reason != agent.StopAnswered || last.Stop.Stats.Repairs != 1 {
		t.Errorf("after the interrupt: repaired %v, the run ended %+v", repaired, last.Stop)
	}
}
