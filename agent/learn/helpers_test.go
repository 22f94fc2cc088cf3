package learn_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/llm/llmtest"
	"github.com/labmate/labmate/llm/openai"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/postgres"
	"github.com/labmate/labmate/memory/sqlite"
)

// pgDSN is the PostgreSQL test server: LABMATE_TEST_POSTGRES (scripts/postgres-test run sets it),
// else a throw-away cluster started for this run; empty when neither is available.
var pgDSN string

func TestMain(m *testing.M) {
	pgDSN = os.Getenv("LABMATE_TEST_POSTGRES")
	var dir string
	if pgDSN == "" {
		if out, err := exec.Command("../../scripts/postgres-test", "start").Output(); err == nil {
			for line := range strings.Lines(string(out)) {
				line = strings.TrimSpace(line)
				if v, ok := strings.CutPrefix(line, "LABMATE_TEST_POSTGRES="); ok {
					pgDSN = v
				}
				if v, ok := strings.CutPrefix(line, "PGTEST_DIR="); ok {
					dir = v
				}
			}
		} else {
			fmt.Fprintf(os.Stderr, "agent/learn: no PostgreSQL (LABMATE_TEST_POSTGRES unset, scripts/postgres-test start: %v): the PostgreSQL cases fail\n", err)
		}
	}
	code := m.Run()
	if dir != "" {
		exec.Command("../../scripts/postgres-test", "stop", dir).Run()
	}
	os.Exit(code)
}

var schemas atomic.Int64

// backends runs fn on a new SQLite store and on a new PostgreSQL schema.
func backends(t *testing.T, fn func(t *testing.T, s memory.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "memory.db"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
	t.Run("postgres", func(t *testing.T) {
		if pgDSN == "" {
			t.Fatal("no PostgreSQL test server (run under scripts/postgres-test run, or install postgresql)")
		}
		db, err := sql.Open("pgx", pgDSN)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("learn%d_%d", os.Getpid(), schemas.Add(1))
		if _, err := db.ExecContext(t.Context(), "DROP SCHEMA IF EXISTS "+name+" CASCADE; CREATE SCHEMA "+name); err != nil {
			t.Fatal(err)
		}
		db.Close()
		u, err := url.Parse(pgDSN)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		s, err := postgres.Open(t.Context(), u.String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		fn(t, s)
	})
}

func model(srv *llmtest.Server, name string) llm.Model {
	return openai.New(name, &openai.Options{Provider: "fake", BaseURL: srv.OpenAIBaseURL()})
}

func run(t testing.TB, a *agent.Agent, task *agent.Task) []*agent.Event {
	t.Helper()
	var evs []*agent.Event
	for ev, err := range a.Run(context.Background(), task) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func stopOf(t testing.TB, evs []*agent.Event) *agent.Stop {
	t.Helper()
	if len(evs) == 0 || evs[len(evs)-1].Stop == nil {
		t.Fatal("the run did not end with a stop event")
	}
	return evs[len(evs)-1].Stop
}

func outcomes(evs []*agent.Event) []*agent.Outcome {
	var out []*agent.Outcome
	for _, e := range evs {
		if e.Type == agent.EventToolResult && e.Tool.Operation != nil {
			out = append(out, e.Tool.Operation)
		}
	}
	return out
}

func accept(summary string, refs ...string) llmtest.Turn {
	v := map[string]any{"decision": "accept", "reasons": "the checkpoint is met", "summary": summary}
	if len(refs) > 0 {
		v["references"] = refs
	}
	return llmtest.JSON(v)
}

// seeing answers with turn, after checking that the request's first message (the plan prompt,
// the step's brief) contains every one of want.
func seeing(t testing.TB, what string, turn llmtest.Turn, want ...string) llmtest.Turn {
	return llmtest.Turn{Reply: func(c *llmtest.Call) llmtest.Turn {
		m := c.Request.Messages[0].Content
		for _, w := range want {
			if !strings.Contains(m, w) {
				t.Errorf("%s (call %d) was not shown %q:\n%s", what, c.N, w, m)
			}
		}
		return turn
	}}
}

// facts lists the active facts of kind k in ns.
func facts(t testing.TB, s memory.Store, ns string, kinds ...memory.Kind) []*memory.Fact {
	t.Helper()
	var out []*memory.Fact
	for r, err := range s.Search(context.Background(), &memory.Query{Namespaces: []string{ns}, Kinds: kinds}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Fact)
	}
	return out
}

func skills(t testing.TB, s memory.Store, ns string) []*memory.Skill {
	t.Helper()
	var out []*memory.Skill
	for r, err := range s.Search(context.Background(), &memory.Query{Namespaces: []string{ns}, Kinds: []memory.Kind{memory.KindSkill}}) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Skill)
	}
	return out
}

// euler is an explicit Euler integration of y' = -k y printing y each step; it is stable when
// |1 - k dt| < 1.
func euler(k int, dt float64, steps int) string {
	return fmt.Sprintf("import time\nk = %d\ndt = %g\ny = 1.0\nfor n in range(%d):\n    y = y + dt * (-k * y)\n    print('y =', y, flush=True)\n    time.sleep(0.01)\nprint('final y =', y)", k, dt, steps)
}
