package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/labmate/labmate/internal/browsertest"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/protocol"
)

// started is a labmate process the test started in the background.
type started struct {
	cmd      *exec.Cmd
	out, err *bytes.Buffer
	done     chan struct{} // closed when it has ended, with waitErr
	waitErr  error
}

// startLabmate starts the built binary with args (env added to the test's) and returns at once.
func startLabmate(t *testing.T, env []string, args ...string) *started {
	t.Helper()
	p := &started{cmd: exec.Command(bin, args...), out: &bytes.Buffer{}, err: &bytes.Buffer{}, done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.err
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.waitErr = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
	})
	return p
}

// ended waits up to within for the process to end and returns its exit code.
func (p *started) ended(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		err := p.waitErr
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(within):
		t.Fatalf("%s did not end within %v of the interrupt\nstdout: %s\nstderr: %s", p.cmd.Args[1], within, p.out, p.err)
		return -1
	}
}

// interruptREST interrupts operation op of session as the dashboard's Interrupt does, over
// REST, and returns the status and body.
func interruptREST(t *testing.T, url, session, op, why string) (int, string) {
	t.Helper()
	resp, body := request(t, "POST", url, "/v1/sessions/"+session+"/operations/"+op+"/interrupt", `{"why": "`+why+`"}`)
	return resp.StatusCode, body
}

// interruptedCell checks the story of an operation read live after the interrupt: the
// operation_interrupt with why, then operation_failed interrupted, saying who asked.
func interruptedCell(t *testing.T, rest []*protocol.EnhancedMessage, why string) {
	t.Helper()
	var in protocol.Interrupt
	saw := false
	for _, m := range rest {
		if m.Type == protocol.TypeInterrupt {
			saw = m.Decode(&in) == nil && in.Why == why
		}
	}
	var end protocol.Failed
	last := rest[len(rest)-1]
	if !saw || last.Type != protocol.TypeFailed || last.Decode(&end) != nil || end.Reason != protocol.ReasonInterrupted || end.Verdict != nil ||
		!strings.Contains(end.Error, "interrupted: "+why) {
		t.Errorf("after the interrupt the log has (interrupt seen %v) %s %s; want the interrupt, then operation_failed interrupted, saying why", saw, last.Type, last.Payload)
	}
}

// Issue 31: a local labmate exec's running cell, shown on a running labmate serve, is stopped by
// an interrupt asked of the server (the dashboard's Interrupt, over REST): the cell ends
// interrupted within seconds, exec exits 130, and the log tells the interrupt and its outcome.
// An interrupt of a cell whose labmate exec was killed is refused, saying so, at once.
func TestExecInterruptedFromServer(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	cell := write(t, t.TempDir(), "loop.py", "import time\nfor i in range(600):\n    print('tick', i, flush=True)\n    time.sleep(0.05)\n")
	p := startLabmate(t, nil, "exec", "--data", data, "--workspace", t.TempDir(), cell)
	session, c := followNew(t, url)
	var last int64
	first := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return line(m, "tick 2") })
	op := first[0].OperationID
	asked := time.Now()
	if code, body := interruptREST(t, url, session, op, "a person asked"); code != 202 {
		t.Fatalf("interrupting labmate exec's cell: %d %s", code, body)
	}
	rest := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type.Terminal() })
	if code := p.ended(t, 10*time.Second); code != 130 {
		t.Errorf("labmate exec exited %d, want 130 (interrupted)\n%s", code, p.err)
	}
	if took := time.Since(asked); took > 5*time.Second {
		t.Errorf("the cell stopped %v after the interrupt, want within seconds", took)
	}
	interruptedCell(t, rest, "a person asked")

	// A labmate exec killed while its cell runs: the interrupt says so, and the log ends the cell.
	p = startLabmate(t, nil, "exec", "--data", data, "--workspace", t.TempDir(), cell)
	var op2, session2 string
	deadline := time.Now().Add(30 * time.Second)
	for op2 == "" && time.Now().Before(deadline) {
		var list []protocol.SessionInfo
		getJSON(t, url+"/v1/sessions", &list)
		for _, s := range list {
			if s.ID == session {
				continue
			}
			var ops []protocol.OperationInfo
			getJSON(t, url+"/v1/sessions/"+s.ID+"/operations", &ops)
			if len(ops) > 0 && ops[0].State == protocol.InProgress {
				op2, session2 = ops[0].ID, s.ID
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if op2 == "" {
		t.Fatalf("the second labmate exec's cell never ran\n%s", p.err)
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	p.ended(t, 10*time.Second)
	asked = time.Now()
	code, body := interruptREST(t, url, session2, op2, "too late")
	if code != 409 || !strings.Contains(body, "labmate exec") || !strings.Contains(body, "stopped while it ran") {
		t.Errorf("interrupting the cell of a killed labmate exec: %d %s; want 409 saying its process stopped", code, body)
	}
	if took := time.Since(asked); took > 3*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	var ops []protocol.OperationInfo
	getJSON(t, url+"/v1/sessions/"+session2+"/operations", &ops)
	if len(ops) != 1 || ops[0].State != protocol.FailedState {
		t.Errorf("the killed exec's cell is %+v in the log, want failed (process_died)", ops)
	}
}

// loopProtocol is a bench protocol that loads a plate, says so, and loops printing.
const loopProtocol = `import time

metadata = {"apiLevel": "2.13"}


def run(protocol):
    protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    print("plate loaded", flush=True)
    for i in range(600):
        print("waiting", i, flush=True)
        time.sleep(0.05)
`

// Issue 31: a labmate lab run's protocol, shown on a running labmate serve, is stopped by an
// interrupt sent to the server over the session's WebSocket, as the dashboard's Interrupt
// sends it: it ends interrupted within seconds, and the log says so.
func TestLabRunInterruptedFromServer(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	ws := t.TempDir()
	write(t, ws, "loop.py", loopProtocol)
	p := startLabmate(t, nil, "lab", "run", "--data", data, "--workspace", ws, filepath.Join(ws, "loop.py"))
	_, c := followNew(t, url)
	var last int64
	first := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return line(m, "waiting 2") })
	asked := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	in := `{"type": "operation_interrupt", "operation_id": "` + first[0].OperationID + `", "payload": {"why": "stop the bench"}}`
	if err := c.Write(ctx, websocket.MessageText, []byte(in)); err != nil {
		t.Fatal(err)
	}
	rest := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type.Terminal() })
	if code := p.ended(t, 10*time.Second); code != 1 {
		t.Errorf("labmate lab run exited %d, want 1 (the protocol failed)\n%s", code, p.err)
	}
	if took := time.Since(asked); took > 5*time.Second {
		t.Errorf("the protocol stopped %v after the interrupt, want within seconds", took)
	}
	interruptedCell(t, rest, "stop the bench")
}

// Issue 31: one campaign of a labmate campaign run, shown on a running labmate serve, is
// stopped by an interrupt asked of the server while its planner (a model over HTTP) thinks:
// its stream ends interrupted, the other campaigns of the process play on to their budget, and
// the command exits 2, leaving the interrupted one out of its summary.
func TestCampaignInterruptedFromServer(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	dir := t.TempDir()
	csv := writeSmall(t, dir)
	choice := llmtest.JSON(map[string]any{"observation": "trying L1", "choice": map[string]string{"lig": "L1", "base": "B1", "solvent": "S1"}})
	slow := choice
	slow.Delay = time.Minute // the planner thinks until the interrupt stops the campaign
	model := llmtest.NewServer(t, choice, slow, choice, choice, choice, choice)
	env := modelEnv(t, "OPENAI_BASE_URL="+model.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
	p := startLabmate(t, env, "campaign", "run", "--dataset", csv, "--vars", "lig,base,solvent", "--group", "sub",
		"--planner", "llm", "--model", "openai:gpt-test", "--turns", "2", "--seeds", "1", "--data-dir", data)
	type camp struct {
		Campaign struct{ ID, Group string }
		Steps    []json.RawMessage
		Done     bool
		Reason   protocol.Reason
		Error    string
	}
	var list []camp
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && (len(list) != 1 || len(list[0].Steps) != 1 || model.Remaining() != 4) {
		time.Sleep(50 * time.Millisecond)
		getJSON(t, url+"/v1/campaigns", &list)
	}
	if len(list) != 1 || len(list[0].Steps) != 1 {
		t.Fatalf("the first campaign is %+v, want one with one step, thinking about the second\n%s", list, p.err)
	}
	id := list[0].Campaign.ID
	asked := time.Now()
	if code, body := interruptREST(t, url, id, id, "enough of this one"); code != 202 {
		t.Fatalf("interrupting the campaign: %d %s", code, body)
	}
	if code := p.ended(t, 20*time.Second); code != 2 {
		t.Errorf("labmate campaign run exited %d, want 2 (a campaign was interrupted)\n%s", code, p.err)
	}
	if !strings.Contains(p.err.String(), "enough of this one") || !strings.Contains(p.err.String(), "left out of the summary") {
		t.Errorf("campaign run said %q, want the interrupt and that the campaign is left out", p.err)
	}
	if took := time.Since(asked); took > 10*time.Second {
		t.Errorf("campaign run ended %v after the interrupt", took)
	}
	getJSON(t, url+"/v1/campaigns", &list)
	reasons := map[string]string{}
	for _, c := range list {
		reasons[c.Campaign.Group] = string(c.Reason)
		if c.Campaign.ID == id && (len(c.Steps) != 1 || !c.Done || c.Reason != protocol.ReasonInterrupted || !strings.Contains(c.Error, "enough of this one")) {
			t.Errorf("the interrupted campaign: %d steps, done %v, %s %q; want 1 step, interrupted, saying why", len(c.Steps), c.Done, c.Reason, c.Error)
		}
	}
	if len(list) != 3 || reasons["B"] != "budget_spent" || reasons["C"] != "budget_spent" {
		t.Errorf("the campaigns ended %v, want A interrupted, B and C played to their budget", reasons)
	}
	// The campaign's stream: start, its step, the interrupt, its end.
	var types []string
	var msgs []*protocol.EnhancedMessage
	getJSON(t, url+"/v1/sessions/"+id+"/messages", &msgs)
	for _, m := range msgs {
		if m.OperationID == id {
			types = append(types, string(m.Type))
		}
	}
	if got := strings.Join(types, " "); got != "run_event run_event operation_interrupt run_end" {
		t.Errorf("the campaign's stream is %q, want its start, a step, the interrupt, its end", got)
	}
}

// Issue 31: the dashboard of a running labmate serve shows a campaign that labmate campaign run
// plays as played by that process, follows its turns, and its Interrupt (real Chromium) stops
// it there: the page shows it done, interrupted from the dashboard, and the command exits 2.
func TestDashboardInterruptsCampaignRun(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data)
	dir := t.TempDir()
	csv := writeSmall(t, dir)
	choice := llmtest.JSON(map[string]any{"observation": "trying L1", "choice": map[string]string{"lig": "L1", "base": "B1", "solvent": "S1"}})
	slow := choice
	slow.Delay = time.Minute
	model := llmtest.NewServer(t, choice, slow)
	env := modelEnv(t, "OPENAI_BASE_URL="+model.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
	p := startLabmate(t, env, "campaign", "run", "--dataset", csv, "--vars", "lig,base,solvent", "--group", "sub", "--only", "A",
		"--planner", "llm", "--model", "openai:gpt-test", "--turns", "3", "--seeds", "1", "--data-dir", data)
	var list []struct{ Steps []json.RawMessage }
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && (len(list) != 1 || len(list[0].Steps) != 1); {
		time.Sleep(50 * time.Millisecond)
		getJSON(t, url+"/v1/campaigns", &list)
	}
	if len(list) != 1 || len(list[0].Steps) != 1 {
		t.Fatalf("the campaign has not played its first turn: %+v\n%s", list, p.err)
	}
	ctx := browsertest.Start(t, 90*time.Second)
	v, _ := served.Load(url)
	if err := chromedp.Do(ctx, chromedp.Navigate(v.(servedInfo).dashboard+"#campaigns")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait(t, ctx, "the campaign is listed", `document.querySelector("#camp-list button") !== null`)
	browsertest.Click(t, ctx, "#camp-list button")
	browsertest.Wait(t, ctx, "it is shown played by labmate campaign run, with an Interrupt", `document.querySelector("#camp-summary").textContent.includes("played by labmate campaign (pid ") && `+
		`!document.querySelector("#camp-interrupt").hidden && document.querySelector("#camp-step").disabled && document.querySelector("#camp-play").disabled`)
	browsertest.Click(t, ctx, "#camp-interrupt")
	browsertest.Wait(t, ctx, "it is shown interrupted", `(s => s.includes("1 of 3 turns") && s.includes("done") && s.includes("stopped: interrupted from the dashboard"))(document.querySelector("#camp-summary").textContent) && `+
		`document.querySelector("#camp-interrupt").hidden`)
	if code := p.ended(t, 10*time.Second); code != 2 {
		t.Errorf("labmate campaign run exited %d, want 2\n%s", code, p.err)
	}
	browsertest.Screenshot(t, ctx, "campaign-interrupted.png")
}
