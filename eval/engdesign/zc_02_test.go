package engdesign

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/eval"
)

func TestZC02(t *testing.T) {
	tests := []struct {
		name   string
		alpha  float64
		points int
	}{
		{"the original's alpha_max", 0.651, 95},
		{"the largest alpha accepted", 1.087, 95},
		{"inside the accepted range", 0.8, 95},
		{"92 % of alpha_max", 0.6, 90},
		{"beyond the largest alpha accepted", 1.0871, 0},
		{"far beyond", 10, 0},
		{"84 % of alpha_max", 0.55, 80},
		{"77 % of alpha_max", 0.5, 70},
		{"65 % of alpha_max", 0.42, 60},
		{"54 % of alpha_max", 0.35, 50},
		{"49 % of alpha_max", 0.32, 0},
		{"zero", 0, 0},
		{"negative", -0.7, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			config := fmt.Sprintf(`{"alpha": %v}`, tt.alpha)
			passed := tt.points >= 90
			want := &eval.Grade{Score: float64(tt.points), Passed: passed, Details: map[string]any{
				"alpha score": check{tt.alpha, passed, tt.points, 95},
			}}
			if diff := cmp.Diff(want, gradeConfig(t, graders["ZC_02"], config)); diff != "" {
				t.Errorf("grade of %s (-want +got):\n%s", config, diff)
			}
		})
	}
}

// TestZC02Expected grades the task's grader_expected: both ends of the range the original accepts.
func TestZC02Expected(t *testing.T) {
	var e struct {
		Optimal float64 `json:"optimal_alpha"`
		Max     float64 `json:"max_alpha"`
	}
	taskExpected(t, "ZC_02", &e)
	for _, alpha := range []float64{e.Optimal, e.Max} {
		if got := gradeConfig(t, graders["ZC_02"], fmt.Sprintf(`{"alpha": %v}`, alpha)); got.Score != 95 || !got.Passed {
			t.Errorf("grade of alpha %v = %+v, want 95 and passed", alpha, got)
		}
	}
}

func TestZC02Malformed(t *testing.T) {
	testMalformed(t, graders["ZC_02"], []string{
		`{}`,
		`{"alpha": null}`,
		`{"alpha": "0.651"}`,
		`{"alpha": [0.651]}`,
		`{"alpha": NaN}`,
		`{"alpha": 1e400}`,
		`0.651`,
	})
}

func BenchmarkGradeZC02(b *testing.B) {
	config := json.RawMessage(`{"alpha": 0.651}`)
	for b.Loop() {
		if _, err := gradeZC02(context.Background(), config); err != nil {
			b.Fatal(err)
		}
	}
}
