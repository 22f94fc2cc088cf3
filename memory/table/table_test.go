package table_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
	"github.com/labmate/labmate/memory/table"
)

func TestTables(t *testing.T) {
	var b strings.Builder
	fact := &memory.Fact{ID: "f1", Kind: memory.KindWarning, Namespace: "user", Status: memory.StatusActive,
		Text: "explicit Euler diverges\nfor dt > 0.04 " + strings.Repeat("x", 100), UpdatedAt: time.Date(2026, 1, 2, 3, 4, 0, 0, time.Local)}
	if err := table.Results(&b, []*memory.Result{{Fact: fact, Rank: 1, Score: 0.5}}, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "RANK") || !strings.Contains(lines[1], "explicit Euler diverges for dt > 0.04 x") ||
		!strings.HasSuffix(lines[1], "x…") || utf8.RuneCountInString(lines[1][strings.Index(lines[1], "explicit"):]) != 80 {
		t.Errorf("scored results:\n%s", b.String())
	}
	b.Reset()
	table.Results(&b, []*memory.Result{{Fact: fact}}, false)
	if !strings.Contains(b.String(), "warning  active  user       f1  2026-01-02 03:04") {
		t.Errorf("listed entries:\n%s", b.String())
	}
	b.Reset()
	table.History(&b, []*memory.Change{{Seq: 3, Event: memory.EventUpdate, Old: "dt < 0.1", New: "dt < 0.04", Reason: "diverged"}})
	if !strings.Contains(b.String(), "dt < 0.1 → dt < 0.04 (diverged)") {
		t.Errorf("history:\n%s", b.String())
	}
	b.Reset()
	table.Actions(&b, []consolidate.Action{{Event: memory.EventInvalidate, ID: "f1", Old: "dt < 0.1", Reason: "refuted"}})
	if !strings.Contains(b.String(), "DELETE  f1  dt < 0.1  refuted") {
		t.Errorf("actions:\n%s", b.String())
	}
}
