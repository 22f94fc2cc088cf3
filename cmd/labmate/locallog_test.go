package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/labmate/labmate/protocol"
)

// waitLines is a cell that prints a line, waits for a file go in its workspace, then prints
// another.
const waitLines = "import os, time\nprint('tick 1', flush=True)\nwhile not os.path.exists('go'):\n    time.sleep(0.05)\nprint('tick 2', flush=True)\n"

// followNew waits for the one session that appears in the log of the server at url, and
// returns its WebSocket, reading from the first message.
func followNew(t *testing.T, url string) (string, *websocket.Conn) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, body := request(t, "GET", url, "/v1/sessions", "")
		var list []protocol.SessionInfo
		if resp.StatusCode == 200 && json.Unmarshal([]byte(body), &list) == nil && len(list) == 1 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, _, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/v1/sessions/"+list[0].ID+"/ws", nil)
			if err != nil {
				t.Fatal(err)
			}
			c.SetReadLimit(1 << 20)
			t.Cleanup(func() { c.CloseNow() })
			return list[0].ID, c
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no session appeared on the server")
	return "", nil
}

// readUntil reads the session's messages from c until one satisfies stop, checking that their
// seqs run on from *last without a gap, and returns them.
func readUntil(t *testing.T, c *websocket.Conn, last *int64, stop func(*protocol.EnhancedMessage) bool) []*protocol.EnhancedMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var msgs []*protocol.EnhancedMessage
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("reading the session live after seq %d: %v", *last, err)
		}
		m := &protocol.EnhancedMessage{}
		if err := json.Unmarshal(data, m); err != nil {
			t.Fatalf("%v: %s", err, data)
		}
		if m.Seq != *last+1 {
			t.Fatalf("seq %d after %d", m.Seq, *last)
		}
		*last = m.Seq
		msgs = append(msgs, m)
		if stop(m) {
			return msgs
		}
	}
}

// line says whether m is the progress of a stdout line that contains s.
func line(m *protocol.EnhancedMessage, s string) bool {
	var p protocol.Progress
	return m.Type == protocol.TypeProgress && m.Decode(&p) == nil && p.Observation != nil && strings.Contains(p.Observation.Line, s)
}

// Issue 31: a local labmate exec is in the data directory's log while labmate serve has it open:
// the server lists its session and a WebSocket follower sees its lines as the cell prints them,
// from operation_request to operation_complete, gap-free.
func TestExecInTheLog(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	ws := t.TempDir()
	cell := write(t, t.TempDir(), "wait.py", waitLines)
	cmd := exec.Command(bin, "exec", "--data", data, "--workspace", ws, cell)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	_, c := followNew(t, url)
	var last int64
	first := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return line(m, "tick 1") })
	if first[0].Type != protocol.TypeRequest {
		t.Errorf("the session begins with %s, want operation_request", first[0].Type)
	}
	select {
	case err := <-done:
		t.Fatalf("labmate exec ended (%v) before its first line was seen live\n%s", err, errOut.String())
	default:
	}
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rest := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type.Terminal() })
	if end := rest[len(rest)-1]; end.Type != protocol.TypeComplete {
		t.Errorf("the operation ended %s %s, want operation_complete", end.Type, end.Payload)
	}
	saw := false
	for _, m := range rest {
		saw = saw || line(m, "tick 2")
	}
	if !saw {
		t.Error("the second line was not seen")
	}
	if err := <-done; err != nil {
		t.Fatalf("labmate exec: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "tick 2") {
		t.Errorf("labmate exec printed %q", out.String())
	}
}

// Issue 31: labmate campaign run writes each campaign it plays into the data directory's log
// while labmate serve has it open: the server lists them (GET /v1/campaigns) with every turn,
// and a campaign's session replays over the WebSocket from its start to its run_end, gap-free.
func TestCampaignInTheLog(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	dir := t.TempDir()
	csv := writeSmall(t, dir)
	_, errOut, code := labmate(t, dir, "", "campaign", "run", "--dataset", csv, "--vars", "lig,base,solvent", "--group", "sub",
		"--turns", "5", "--seeds", "1", "--planner", "random", "--store", filepath.Join(dir, "c.db"), "--data-dir", data)
	if code != 0 {
		t.Fatalf("campaign run: exit %d\n%s", code, errOut)
	}
	resp, body := request(t, "GET", url, "/v1/campaigns", "")
	var list []struct {
		Campaign struct{ ID, Group string }
		Steps    []json.RawMessage
		Done     bool
		Reason   protocol.Reason
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &list) != nil || len(list) != 3 {
		t.Fatalf("GET /v1/campaigns: %d %s; want the 3 campaigns played", resp.StatusCode, body)
	}
	for _, c := range list {
		if len(c.Steps) != 5 || !c.Done || c.Reason != "budget_spent" {
			t.Errorf("campaign %s (%s): %d steps, done %v, %s; want 5, done, budget_spent", c.Campaign.ID, c.Campaign.Group, len(c.Steps), c.Done, c.Reason)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, strings.Replace(url, "http", "ws", 1)+"/v1/sessions/"+list[0].Campaign.ID+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	var last int64
	msgs := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type == protocol.TypeRunEnd })
	if len(msgs) != 7 { // start, 5 steps, end
		t.Errorf("the campaign's stream has %d messages, want 7", len(msgs))
	}
}

// waitProtocol is a bench protocol that loads a plate, says so, and waits for a file go in its
// workspace before it ends.
const waitProtocol = `import os, time

metadata = {"apiLevel": "2.13"}


def run(protocol):
    protocol.load_labware("corning_96_wellplate_360ul_flat", 1, "plate")
    print("plate loaded", flush=True)
    while not os.path.exists("go"):
        time.sleep(0.05)
    print("went", flush=True)
`

// Issue 31: labmate lab run writes its protocol's operation into the data directory's log while
// labmate serve has it open: a WebSocket follower sees the protocol's lines as they come.
func TestLabRunInTheLog(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	ws := t.TempDir()
	write(t, ws, "wait.py", waitProtocol)
	cmd := exec.Command(bin, "lab", "run", "--data", data, "--workspace", ws, filepath.Join(ws, "wait.py"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	_, c := followNew(t, url)
	var last int64
	readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return line(m, "plate loaded") })
	select {
	case err := <-done:
		t.Fatalf("labmate lab run ended (%v) before its line was seen live\n%s", err, errOut.String())
	default:
	}
	if err := os.WriteFile(filepath.Join(ws, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rest := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type.Terminal() })
	if end := rest[len(rest)-1]; end.Type != protocol.TypeComplete {
		t.Errorf("the protocol ended %s %s, want operation_complete", end.Type, end.Payload)
	}
	if err := <-done; err != nil {
		t.Fatalf("labmate lab run: %v\n%s\n%s", err, out.String(), errOut.String())
	}
}

// A labmate exec killed -9 while its cell runs, beside a running labmate serve: the server
// ends the stream the dead process left open (operation_failed, process_died) within seconds,
// and its followers see that end after the lines the process showed, gap-free — not an
// operation IN_PROGRESS on the dashboard until the server restarts.
func TestExecKilledEndedByServer(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	ws := t.TempDir()
	cell := write(t, t.TempDir(), "wait.py", waitLines)
	cmd := exec.Command(bin, "exec", "--data", data, "--workspace", ws, cell)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	_, c := followNew(t, url)
	var last int64
	readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return line(m, "tick 1") })
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	rest := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type.Terminal() })
	end := rest[len(rest)-1]
	var f protocol.Failed
	if end.Type != protocol.TypeFailed || end.Decode(&f) != nil || f.Reason != protocol.ReasonProcessDied {
		t.Errorf("the killed operation ended %s %s, want operation_failed (process_died)", end.Type, end.Payload)
	}
	if d := time.Since(killed); d > 10*time.Second {
		t.Errorf("the server ended the killed operation %v after the kill", d.Round(time.Millisecond))
	}
}

// A labmate campaign run killed -9 while it plays, beside a running labmate serve: the server
// ends the campaign's stream (run_end, process_died).
func TestCampaignKilledEndedByServer(t *testing.T) {
	data := t.TempDir()
	_, url := serve(t, data, "--no-token")
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("sub,lig,base,solvent,yield\n")
	for i := range 4000 {
		fmt.Fprintf(&b, "A,L%d,B%d,S%d,%d\n", i/100, i/10%10, i%10, i*37%101)
	}
	csv := write(t, dir, "big.csv", b.String())
	cmd := exec.Command(bin, "campaign", "run", "--dataset", csv, "--vars", "lig,base,solvent", "--group", "sub",
		"--turns", "4000", "--seeds", "1", "--planner", "random", "--store", filepath.Join(dir, "c.db"), "--data-dir", data)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	_, c := followNew(t, url)
	var last int64
	readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type == protocol.TypeRunEvent })
	cmd.Process.Kill()
	cmd.Wait()
	rest := readUntil(t, c, &last, func(m *protocol.EnhancedMessage) bool { return m.Type == protocol.TypeRunEnd })
	var end protocol.RunEnd
	if m := rest[len(rest)-1]; m.Decode(&end) != nil || end.Reason != protocol.ReasonProcessDied && end.Reason != "budget_spent" {
		t.Errorf("the killed campaign ended %s, want process_died", m.Payload)
	}
	if end.Reason == "budget_spent" {
		t.Log("the campaign ended before it was killed")
	}
}
