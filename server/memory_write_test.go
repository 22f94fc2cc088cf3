package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labmate/labmate/memory"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// A person's writes over REST (the dashboard's Memory page): a fact added goes through
// consolidation (a duplicate merges), an edit keeps the old text in the history, an
// invalidation keeps the entry with its reason; bad requests and frozen namespaces are
// refused saying why, and a search reports each hit's score.
func TestMemoryWrites(t *testing.T) {
	mem, err := memsqlite.Open(context.Background(), filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Memory = mem; c.Prewarm = nil })
	do := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, f.http.URL+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := do("POST", "/v1/memory/facts", `{"text": "  ode45 stalls on stiff problems: use ode15s  ", "kind": "warning", "tags": ["octave"], "confidence": 0.8}`)
	var added struct {
		Event string
		Fact  memory.Fact
	}
	if err := json.Unmarshal([]byte(body), &added); err != nil || code != http.StatusCreated || added.Event != "ADD" ||
		added.Fact.Namespace != "user" || added.Fact.Text != "ode45 stalls on stiff problems: use ode15s" || added.Fact.Kind != memory.KindWarning {
		t.Fatalf("add: %d %s", code, body)
	}
	id := added.Fact.ID
	skill, err := mem.PutSkill(context.Background(), &memory.PutSkillParams{Actor: "test",
		Skill: &memory.Skill{Namespace: "user/skills", Name: "stiff-ode", Description: "solve a stiff ODE", Body: "use ode15s"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := mem.Freeze(context.Background(), &memory.FreezeParams{Namespace: "team", Frozen: true, Actor: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/v1/memory/facts", `{"text": "ode45 stalls on stiff problems: use ode15s", "kind": "warning"}`, 200, `"event":"MERGE"`},
		{"POST", "/v1/memory/facts", `{"text": "  "}`, 400, "text"},
		{"POST", "/v1/memory/facts", `{"text": "x", "kind": "rumour"}`, 400, "rumour"},
		{"POST", "/v1/memory/facts", `{"text": "x", "namespace": "Bad NS"}`, 400, "namespace"},
		{"POST", "/v1/memory/facts", `{"text": "x", "colour": 1}`, 400, "colour"},
		{"POST", "/v1/memory/facts", `{"text": "a frozen fact", "namespace": "team"}`, 409, "frozen"},
		{"GET", "/v1/memory/search?q=stiff+ode45", "", 200, `"score":`},
		{"PATCH", "/v1/memory/entries/" + id, `{"text": "ode45 stalls on stiff problems: use ode15s or ode23s", "reason": "ode23s works too"}`, 200, "ode23s"},
		{"GET", "/v1/memory/entries/" + id, "", 200, `"old":"ode45 stalls on stiff problems: use ode15s"`},
		{"PATCH", "/v1/memory/entries/" + id, `{"text": " "}`, 400, "empty"},
		{"PATCH", "/v1/memory/entries/" + id, `{"confidence": 2}`, 400, "confidence"},
		{"PATCH", "/v1/memory/entries/nope", `{"text": "y"}`, 404, "not found"},
		{"PATCH", "/v1/memory/entries/" + skill.Skill.ID, `{"text": "y"}`, 400, "new version"},
		{"POST", "/v1/memory/entries/" + id + "/invalidate", `{}`, 400, "reason"},
		{"POST", "/v1/memory/entries/nope/invalidate", `{"reason": "wrong"}`, 404, "not found"},
		{"POST", "/v1/memory/entries/" + id + "/invalidate", `{"reason": "superstition"}`, 200, `"status":"invalidated"`},
		{"GET", "/v1/memory/entries/" + id, "", 200, `"reason":"superstition"`},
		{"PATCH", "/v1/memory/entries/" + id, `{"text": "again"}`, 409, "not active"},
		{"POST", "/v1/memory/entries/" + skill.Skill.ID + "/invalidate", `{"reason": "obsolete"}`, 200, `"status":"invalidated"`},
	} {
		code, body := do(c.method, c.path, c.body)
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s %s %s: %d %s; want %d mentioning %q", c.method, c.path, c.body, code, body, c.code, c.want)
		}
	}
}

// The dashboard's forms offer exactly the kinds a fact may have.
func TestDashboardFactKinds(t *testing.T) {
	b, err := os.ReadFile("web/app.js")
	if err != nil {
		t.Fatal(err)
	}
	kinds := make([]string, len(memory.FactKinds))
	for i, k := range memory.FactKinds {
		kinds[i] = `"` + string(k) + `"`
	}
	if want := "const FACT_KINDS = [" + strings.Join(kinds, ", ") + "];"; !strings.Contains(string(b), want) {
		t.Errorf("web/app.js lacks %s", want)
	}
}
