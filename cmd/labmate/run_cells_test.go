package main

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/browsertest"
	"github.com/labmate/labmate/internal/testutil"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/protocol/sqlite"
)

// Issue 31, item 2: the cells of labmate run without a server are operations of the run's
// session in DATA/labmate.db, as a server run's are (the run's events name each by a cell event,
// never nesting its messages). A server started afterwards on the same data directory interrupts
// the running cell with POST …/interrupt: the request reaches the labmate run process through
// the log, the cell ends interrupted, the run goes on — the model's next turn reads the
// interruption and repairs the cell in the same kernel — and answers. An interrupt of that cell
// once it has ended, and of the cell of a labmate run killed meanwhile, is refused with a clear
// error; the killed run's cell ends process_died. The dashboard's Interrupt (real Chromium) on
// the cell of a labmate run stops it the same way.
func TestRunCellInterruptedByServer(t *testing.T) {
	data := t.TempDir()
	loop := "x = 5\nimport time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)"
	turns := []llmtest.Turn{
		llmtest.JSON(agent.Plan{Goal: "x", Steps: []agent.Step{{Title: "x", Action: "double x", Tool: agent.ToolRunCode, Checkpoint: "y = 10"}}}),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: loop})),
		call(agent.ToolRunCode, jsonArgs(agent.RunCode{Code: "print('y =', 2 * x)"})),
		llmtest.JSON(map[string]string{"decision": "accept", "reasons": "y = 10", "summary": "y = 10"}),
		call(agent.ToolFinalAnswer, `{"answer": "10"}`),
	}
	all := append(append(append([]llmtest.Turn{}, turns...), oneStep()...), turns...) // the second run is killed in its cell
	fake := llmtest.NewServer(t, all...)
	env := fakeModelEnv(t, fake)

	run, id, out := startRun(t, env, "--data", data, "double x")
	_, url := serve(t, data, "--no-token")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := sqlite.OpenReadOnly(filepath.Join(data, "labmate.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cell := runningCell(ctx, t, st, id)
	// The run's own events name the cell; none carries a cell's message.
	named := false
	for m, err := range st.Operation(ctx, id, id) {
		if err != nil {
			t.Fatal(err)
		}
		ev, err := agent.EventOf(m)
		if m.Type != protocol.TypeRunEvent || err != nil {
			continue
		}
		if ev.Type == agent.EventOperation {
			t.Errorf("run_event %d nests a cell's message: %s", m.Seq, m.Payload)
		}
		named = named || ev.Type == agent.EventCell && ev.Cell.ID == cell
	}
	if !named {
		t.Errorf("no run_event names the cell %s", cell)
	}

	// The server interrupts the cell labmate run runs, once it prints.
	interrupt := "/v1/sessions/" + id + "/operations/" + cell + "/interrupt"
	var failed *protocol.Failed
	var lines []string
	var stop *agent.Stop
	for out.Scan() {
		ev := &agent.Event{}
		if err := json.Unmarshal(out.Bytes(), ev); err != nil {
			t.Fatalf("%v: %s", err, out.Bytes())
		}
		if ev.Stop != nil {
			stop = ev.Stop
		}
		if ev.Type != agent.EventOperation {
			continue
		}
		switch p, _ := protocol.DecodePayload(ev.Message); p := p.(type) {
		case *protocol.Progress:
			if p.Observation == nil || p.Observation.Kind != protocol.ObsStdout {
				continue
			}
			lines = append(lines, p.Observation.Line)
			if ev.Message.OperationID == cell && p.Observation.Line == "tick 2" {
				if resp, body := request(t, http.MethodPost, url, interrupt, `{"why": "a person asked"}`); resp.StatusCode != http.StatusAccepted {
					t.Fatalf("POST %s: %d %s", interrupt, resp.StatusCode, body)
				}
			}
		case *protocol.Failed:
			if ev.Message.OperationID == cell {
				failed = p
			}
		}
	}
	if err := run.Wait(); err != nil {
		t.Fatalf("labmate run: %v", err)
	}
	if failed == nil || failed.Reason != protocol.ReasonInterrupted || failed.Verdict != nil {
		t.Errorf("the cell ended %+v, want interrupted", failed)
	}
	if stop == nil || stop.Reason != agent.StopAnswered || stop.Stats.Repairs != 1 || stop.Stats.Operations != 2 {
		t.Errorf("the run stopped %+v, want answered after one repair", stop)
	}
	if len(lines) == 0 || lines[len(lines)-1] != "y = 10" || len(lines) > 100 {
		t.Errorf("the cells printed %q, want ticks cut short, then y = 10 from the same kernel", lines)
	}
	if calls := fake.Calls(); len(calls) < 3 || !strings.Contains(string(calls[2].Body), "interrupted") {
		t.Errorf("the model's turn after the cell did not read the interruption")
	}
	var logged protocol.Failed
	for m, err := range st.Operation(ctx, id, cell) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeFailed {
			m.Decode(&logged)
		}
	}
	if logged.Reason != protocol.ReasonInterrupted {
		t.Errorf("the log ends the cell %+v, want interrupted", logged)
	}
	if resp, body := request(t, http.MethodPost, url, interrupt, "{}"); resp.StatusCode != http.StatusConflict || !strings.Contains(body, "has ended") {
		t.Errorf("interrupting the cell again: %d %s, want 409, ended", resp.StatusCode, body)
	}

	// A labmate run killed in its cell: nobody runs the cell any more.
	run2, id2, _ := startRun(t, env, "--data", data, "compute x")
	cell2 := runningCell(ctx, t, st, id2)
	run2.Process.Kill()
	run2.Wait()
	resp, body := request(t, http.MethodPost, url, "/v1/sessions/"+id2+"/operations/"+cell2+"/interrupt", "{}")
	if resp.StatusCode != http.StatusConflict || !strings.Contains(body, "stopped while it ran") && !strings.Contains(body, "has ended") {
		t.Errorf("interrupting the cell of a killed labmate run: %d %s, want 409 saying its process stopped", resp.StatusCode, body)
	}
	logged = protocol.Failed{}
	for m, err := range st.Operation(ctx, id2, cell2) {
		if err != nil {
			t.Fatal(err)
		}
		if m.Type == protocol.TypeFailed {
			m.Decode(&logged)
		}
	}
	if logged.Reason != protocol.ReasonProcessDied {
		t.Errorf("the killed run's cell ends %+v in the log, want process_died", logged)
	}
	// The dashboard's Interrupt on the cell of a third labmate run (its WebSocket's
	// operation_interrupt) stops that cell in the process too, and the run repairs it.
	run3, id3, out3 := startRun(t, env, "--data", data, "double x again")
	bctx := browsertest.Start(t, time.Minute)
	if err := chromedp.Do(bctx, chromedp.Navigate(url+"/#lab/"+id3)); err != nil {
		t.Fatal(err)
	}
	loopCard := `[...document.querySelectorAll("#stream article.op")].find((a) => a.querySelector("pre.code").textContent.includes("range(600)"))`
	browsertest.Wait(t, bctx, "the cell of labmate run, running, its Interrupt offered", `!!`+loopCard+` && `+loopCard+`.innerText.includes("tick 3") && !`+loopCard+`.querySelector("button.danger").hidden`)
	cell3 := strings.TrimPrefix(browsertest.Eval(t, bctx, loopCard+`.id`), "op-")
	browsertest.Click(t, bctx, "#op-"+cell3+" button.danger")
	browsertest.Wait(t, bctx, "the cell is shown interrupted", loopCard+`.querySelector(".badge.s-interrupted") !== null`)
	for out3.Scan() {
	}
	if err := run3.Wait(); err != nil {
		t.Fatalf("labmate run, its cell interrupted from the dashboard: %v", err)
	}
	var why string
	logged = protocol.Failed{}
	for m, err := range st.Operation(ctx, id3, cell3) {
		if err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case protocol.TypeInterrupt:
			var in protocol.Interrupt
			m.Decode(&in)
			why = in.Why
		case protocol.TypeFailed:
			m.Decode(&logged)
		}
	}
	if why != "interrupted from the dashboard" || logged.Reason != protocol.ReasonInterrupted {
		t.Errorf("the cell interrupted from the dashboard: interrupt %q, end %+v in the log", why, logged)
	}

	// The server ends the killed run once it sees its process gone; then every stream replays.
	for ended := false; !ended; time.Sleep(50 * time.Millisecond) {
		ops, err := st.Operations(ctx, id2)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			ended = ended || op.ID == id2 && op.State.Terminal()
		}
		if ctx.Err() != nil {
			t.Fatalf("the killed run %s was never ended: %+v", id2, ops)
		}
	}
	testutil.ReplayStore(t, st)
}

// runningCell is the exec operation of run id's session, open in the log, read with the store.
func runningCell(ctx context.Context, t *testing.T, st *sqlite.Store, id string) string {
	t.Helper()
	ops, err := st.Operations(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var cells []string
	for _, op := range ops {
		if op.Kind == "exec" && op.State.Live() {
			cells = append(cells, op.ID)
		}
	}
	if len(cells) != 1 {
		t.Fatalf("run %s's session has the running cells %q in the log (%+v), want one", id, cells, ops)
	}
	return cells[0]
}
