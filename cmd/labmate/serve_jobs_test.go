package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/job/slurm/slurmtest"
	"github.com/labmate/labmate/protocol"
)

// jobOp reads job operation id (in its session id) from a server's log.
func jobOp(t *testing.T, url, id string) (msgs []*protocol.EnhancedMessage, seqs []int64) {
	t.Helper()
	resp, body := request(t, http.MethodGet, url, "/v1/sessions/"+id+"/operations/"+id+"/messages", "")
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(body), &msgs); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for _, m := range msgs {
		if m.Type != protocol.TypeProgress {
			continue
		}
		var p protocol.Progress
		json.Unmarshal(m.Payload, &p)
		if p.Observation != nil && p.Observation.JobSeq > 0 {
			seqs = append(seqs, p.Observation.JobSeq)
		}
	}
	return msgs, seqs
}

// waitJobOp polls until job operation id has ended, or fails.
func waitJobOp(t *testing.T, url, id string) ([]*protocol.EnhancedMessage, []int64) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		msgs, seqs := jobOp(t, url, id)
		if len(msgs) > 0 && msgs[len(msgs)-1].Type.Terminal() {
			return msgs, seqs
		}
		if time.Now().After(deadline) {
			t.Fatalf("job operation %s did not end: %d messages", id, len(msgs))
		}
	}
}

// Must hold (issue 20): a job submitted over REST survives kill -9 of labmate serve; the
// restarted server follows it on to its end, every log line in the log exactly once; and a
// job submitted with labmate job submit while it runs is adopted, watched to its end.
func TestServeJobKilled(t *testing.T) {
	data := t.TempDir()
	cmd, url := serve(t, data, "--no-token")
	resp, body := request(t, http.MethodPost, url, "/v1/jobs", `{"name": "count", "script": "for i in $(seq 1 30); do echo line $i; sleep 0.1; done"}`)
	var sub map[string]string
	if err := json.Unmarshal([]byte(body), &sub); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Skipf("POST /v1/jobs: %d %s (no local jobs here?)", resp.StatusCode, body)
	}
	id := sub["id"]
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, seqs := jobOp(t, url, id); len(seqs) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job logged no lines")
		}
	}
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()

	_, url = serve(t, data, "--no-token")
	msgs, seqs := waitJobOp(t, url, id)
	if msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Fatalf("after kill -9 and a restart the job ended %s %s", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	want := make([]int64, 30)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(seqs, want) {
		t.Errorf("job_seq over kill -9: %v: want 1…30, each once", seqs)
	}

	out, errOut, code := jobCLI(t, data, t.TempDir(), "", "submit", "--name", "cli", "--", "sh", "-c", "sleep 0.5; echo from the cli")
	cli := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(cli, "local-") {
		t.Fatalf("labmate job submit: %d %q %s", code, out, errOut)
	}
	msgs, seqs = waitJobOp(t, url, cli)
	if msgs[len(msgs)-1].Type != protocol.TypeComplete || len(seqs) != 1 {
		t.Errorf("the CLI's job, adopted: %s %s, lines %v", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload, seqs)
	}
	resp, body = request(t, http.MethodGet, url, "/v1/jobs", "")
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"session":"`+cli+`"`) || !strings.Contains(body, `"session":"`+id+`"`) {
		t.Errorf("GET /v1/jobs: %d %s", resp.StatusCode, body)
	}
}

// Must hold (issue 20): a Slurm job survives kill -9 of labmate serve trivially and is
// followed again: the restarted server follows its operation on to its end, every log line
// in the log exactly once.
func TestServeSlurmJobKilled(t *testing.T) {
	c := slurmtest.Start(t)
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	data := t.TempDir()
	cmd, url := serve(t, data, "--no-token")
	resp, body := request(t, http.MethodPost, url, "/v1/jobs", `{"scheduler": "slurm", "name": "count", "script": "for i in $(seq 1 20); do echo line $i; sleep 0.25; done", "resources": {"cores": 1}}`)
	var sub map[string]string
	if err := json.Unmarshal([]byte(body), &sub); err != nil || resp.StatusCode != http.StatusAccepted || !strings.HasPrefix(sub["id"], "slurm-") {
		t.Fatalf("POST /v1/jobs: %d %s", resp.StatusCode, body)
	}
	id := sub["id"]
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if msgs, seqs := jobOp(t, url, id); len(seqs) >= 2 {
			if msgs[len(msgs)-1].Type.Terminal() {
				t.Fatalf("the Slurm job ended before the kill: %s", msgs[len(msgs)-1].Payload)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Slurm job logged no lines")
		}
	}
	cmd.Process.Kill() // SIGKILL, while the job runs
	cmd.Wait()

	_, url = serve(t, data, "--no-token")
	msgs, seqs := waitJobOp(t, url, id)
	if msgs[len(msgs)-1].Type != protocol.TypeComplete {
		t.Fatalf("after kill -9 and a restart the Slurm job ended %s %s", msgs[len(msgs)-1].Type, msgs[len(msgs)-1].Payload)
	}
	want := make([]int64, 20)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if !slices.Equal(seqs, want) {
		t.Errorf("job_seq over kill -9: %v: want 1…20, each once", seqs)
	}
}
