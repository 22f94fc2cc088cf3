package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/labmate/labmate/agent/learn"
	"github.com/labmate/labmate/memory"
	memsqlite "github.com/labmate/labmate/memory/sqlite"
	"github.com/labmate/labmate/protocol"
	"github.com/labmate/labmate/server"
)

// GET /v1/memory/search is the memory tools' search_memory: the same hits, in the same order,
// with the same default and cap on their number, as the tool gives a model.
func TestMemorySearchIsTheTool(t *testing.T) {
	ctx := context.Background()
	mem, err := memsqlite.Open(ctx, filepath.Join(t.TempDir(), "memory.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mem.Close() })
	for i := range 60 {
		kind := memory.KindObservation
		if i%3 == 0 {
			kind = memory.KindWarning
		}
		if _, err := mem.AddFact(ctx, &memory.AddFactParams{Actor: "test", Fact: &memory.Fact{Namespace: "lab", Kind: kind,
			Text: fmt.Sprintf("ode45 run %d took %d steps on the stiff van der Pol problem", i, 100+i)}}); err != nil {
			t.Fatal(err)
		}
	}
	f := newFixture(t, protocol.NewMemStore(), func(c *server.Config) { c.Memory = mem; c.Prewarm = nil })
	tools := learn.Tools(mem, nil)
	for _, c := range []struct {
		query string
		args  learn.SearchMemoryIn
		want  int
	}{
		{"q=ode45+stiff", learn.SearchMemoryIn{Query: "ode45 stiff"}, 8},
		{"q=ode45&limit=20", learn.SearchMemoryIn{Query: "ode45", Limit: 20}, 20},
		{"q=ode45&limit=500", learn.SearchMemoryIn{Query: "ode45", Limit: 500}, 50},
		{"q=ode45&kind=warning&limit=50", learn.SearchMemoryIn{Query: "ode45", Kinds: []string{"warning"}, Limit: 50}, 20},
		{"q=nothing+like+it", learn.SearchMemoryIn{Query: "nothing like it"}, 0},
	} {
		resp, err := http.Get(f.http.URL + "/v1/memory/search?" + c.query)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var rest []struct {
			Fact  *learn.FactOut  `json:"fact"`
			Skill *learn.SkillOut `json:"skill"`
		}
		if err := json.Unmarshal(raw, &rest); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", c.query, resp.StatusCode, raw)
		}
		args, _ := json.Marshal(c.args)
		res, err := tools[0].Call(ctx, args)
		if err != nil || res.IsError {
			t.Fatalf("search_memory %s: %v %+v", args, err, res)
		}
		var restFacts []learn.FactOut
		for _, h := range rest {
			restFacts = append(restFacts, *h.Fact)
		}
		toolFacts := res.Data.(learn.SearchOut).Facts
		if len(restFacts) != c.want {
			t.Errorf("%s: %d hits, want %d", c.query, len(restFacts), c.want)
		}
		if diff := cmp.Diff(toolFacts, restFacts, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: REST and search_memory differ (-tool +rest):\n%s", c.query, diff)
		}
	}
}
