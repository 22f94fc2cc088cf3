package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/sqlite"
)

func TestRoundTripAndReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "campaigns.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Unix(1700000000, 123456789)
	for _, g := range []string{"A", "B"} {
		if err := st.Begin(ctx, &lab.Campaign{ID: "c" + g, Space: "s", Objective: "yield", Group: g, Planner: "bayes", Seed: 3, Budget: 2, Started: t0}); err != nil {
			t.Fatal(err)
		}
	}
	want := []*lab.Step{
		{Campaign: "cB", Group: "B", N: 1, Conditions: lab.Conditions{"lig": "L1"}, Value: 12.5, OK: true, Reasoning: "try L1", Propose: 3 * time.Millisecond, Time: t0},
		{Campaign: "cB", Group: "B", N: 2, Error: "lab: invalid proposal: x", Raw: "{", Time: t0.Add(time.Second)},
	}
	for _, s := range want {
		if err := st.Record(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Record(ctx, &lab.Step{Campaign: "cA", Group: "A", N: 1, OK: true, Value: 1, Time: t0}); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(ctx, &lab.Step{Campaign: "cA", Group: "A", N: 1, OK: true, Value: 1, Time: t0}); err == nil {
		t.Error("a second step 1 of the same campaign was accepted")
	}
	if err := st.Record(ctx, &lab.Step{Campaign: "nope", N: 1, Time: t0}); err == nil {
		t.Error("a step of an unknown campaign was accepted")
	}
	st.Close()

	st, err = sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var got []*lab.Step
	for s, err := range st.Steps(ctx, &lab.Query{Space: "s", Objective: "yield", ExcludeGroup: "A"}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("steps (-want +got):\n%s", d)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	st, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := sqlite.Open(path); !errors.Is(err, sqlite.ErrNewerSchema) {
		t.Fatalf("err = %v, want ErrNewerSchema", err)
	}
}
