package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/labmate/labmate/llm/llmtest"
)

// TestEvalKilled: labmate eval killed with SIGKILL midway and run again finishes only the
// trials left — the model is called once per remaining trial — and its summary is byte for
// byte that of an eval that was never interrupted.
func TestEvalKilled(t *testing.T) {
	dir, b, items := sciBench(t, "")
	// model answers every other problem right, each call taking delay.
	model := func(delay time.Duration) (*llmtest.Server, *atomic.Int64) {
		srv := llmtest.NewServer(t)
		var calls atomic.Int64
		for range items {
			srv.Add(llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
				calls.Add(1)
				time.Sleep(delay)
				for i, it := range items {
					if strings.Contains(c.Request.Messages[len(c.Request.Messages)-1].Content, it.Goal) || strings.Contains(c.Request.Messages[0].Content, it.Goal) {
						v, _ := b.Reference(it.ID)
						if i%2 == 1 {
							v = v*1.06 + 1e-3
						}
						return llmtest.Text(`\boxed{` + strconv.FormatFloat(v, 'g', -1, 64) + `}`)
					}
				}
				return llmtest.Text("?")
			}})
		}
		return srv, &calls
	}
	args := func(out string) []string {
		return []string{"eval", "scibench", "--dataset", dir, "--model", "openai:llmtest", "--mode", "direct", "--out", out}
	}
	env := func(srv *llmtest.Server) []string {
		return modelEnv(t, "OPENAI_BASE_URL="+srv.OpenAIBaseURL(), "OPENAI_API_KEY=sk-test")
	}
	work := t.TempDir()

	whole := filepath.Join(work, "whole")
	srv, _ := model(0)
	if _, errOut, code := labmateEnv(t, env(srv), work, "", args(whole)...); code != 0 {
		t.Fatalf("uninterrupted: exit %d\n%s", code, errOut)
	}

	cut := filepath.Join(work, "cut")
	srv, _ = model(20 * time.Millisecond)
	cmd := exec.Command(bin, args(cut)...)
	cmd.Env, cmd.Dir = append(os.Environ(), env(srv)...), work
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	trials := filepath.Join(cut, "trials.jsonl")
	deadline := time.Now().Add(time.Minute)
	for done := 0; done < 30; {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("only %d trials after a minute", done)
		}
		time.Sleep(10 * time.Millisecond)
		bs, _ := os.ReadFile(trials)
		done = bytes.Count(bs, []byte("\n"))
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	bs, err := os.ReadFile(trials)
	if err != nil {
		t.Fatal(err)
	}
	done := bytes.Count(bs, []byte("\n")) // a line cut by the kill has no newline: it runs again
	if done >= len(items) {
		t.Fatalf("the kill came after all %d trials", done)
	}

	srv, calls := model(0)
	if _, errOut, code := labmateEnv(t, env(srv), work, "", args(cut)...); code != 0 {
		t.Fatalf("rerun: exit %d\n%s", code, errOut)
	}
	if int(calls.Load()) != len(items)-done {
		t.Errorf("the rerun called the model %d times; %d trials were left", calls.Load(), len(items)-done)
	}
	for _, f := range []string{"summary.md", "summary.csv", "tokens.csv"} {
		a, err1 := os.ReadFile(filepath.Join(whole, f))
		c, err2 := os.ReadFile(filepath.Join(cut, f))
		if err1 != nil || err2 != nil || !bytes.Equal(a, c) {
			t.Errorf("%s differs after the kill and the rerun (%v, %v):\n%s\n---\n%s", f, err1, err2, a, c)
		}
	}
	t.Logf("killed after %d of %d trials", done, len(items))
}
