package engdesign

// Helpers shared by the tests of this package's graders.

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

// gradeConfig grades config with g, failing the test if the grader cannot run, and checks that
// the Grade is JSON, as eval.Grade promises.
func gradeConfig(t testing.TB, g Grader, config string) *eval.Grade {
	t.Helper()
	got, err := g(context.Background(), json.RawMessage(config))
	if err != nil {
		t.Fatalf("grading %.100s: %v", config, err)
	}
	if _, err := json.Marshal(got); err != nil {
		t.Fatalf("grade of %.100s is no JSON: %v", config, err)
	}
	return got
}

// testMalformed checks that each config is a score-0 Grade that says why.
func testMalformed(t *testing.T, g Grader, configs []string) {
	t.Helper()
	for _, config := range configs {
		got := gradeConfig(t, g, config)
		if msg, _ := got.Details["error"].(string); got.Score != 0 || got.Passed || !strings.HasPrefix(msg, "config: ") {
			t.Errorf("grade of %.100s = %+v, want score 0 and the reason under error", config, got)
		}
	}
}

// jsonConfig is v as JSON.
func jsonConfig(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// failing marks the checks named in failed of Details d as failed, with no points.
func failing(d map[string]any, failed []string) map[string]any {
	for _, name := range failed {
		c := d[name].(check)
		c.Passed, c.Points = false, 0
		d[name] = c
	}
	return d
}

// taskExpected decodes the grader_expected of task id (shared/benchmarks/engdesign) into v.
func taskExpected(t *testing.T, id string, v any) {
	t.Helper()
	dir, err := eval.Find("benchmarks/engdesign")
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task.ID == id {
			if err := json.Unmarshal(task.Expected, v); err != nil {
				t.Fatalf("%s grader_expected: %v", id, err)
			}
			return
		}
	}
	t.Fatalf("no task %s in %s", id, dir)
}

// approxNumbers compares measured values to a relative 1e-6 (1e-9 near zero); NaN equals NaN.
var approxNumbers = approx(1e-6)

// approx compares measured values to the relative tolerance rel (1e-9 near zero); NaN equals NaN.
func approx(rel float64) cmp.Option {
	return cmp.Comparer(func(a, b number) bool {
		x, y := float64(a), float64(b)
		if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
			return math.IsNaN(x) && math.IsNaN(y) || x == y
		}
		return math.Abs(x-y) <= 1e-9+rel*math.Max(math.Abs(x), math.Abs(y))
	})
}
