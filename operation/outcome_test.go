package operation_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/protocol"
)

func progress(kind protocol.ObservationKind, line string) *operation.Message {
	return &operation.Message{Type: protocol.TypeProgress, Payload: &protocol.Progress{Observation: &protocol.Observation{Kind: kind, Line: line}}}
}

func TestOutcomeKeepsHeadAndTail(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits *operation.OutputLimits
		lines  int
		want   string
		cut    int
	}{
		{"short", &operation.OutputLimits{Lines: 2}, 3, "0\n1\n2\n", 0},
		{"lines", &operation.OutputLimits{Lines: 2}, 7, "0\n1\n[… 3 lines elided (6 bytes) …]\n5\n6\n", 3},
		{"bytes", &operation.OutputLimits{Bytes: 12}, 100, "0\n1\n2\n[… 95 lines elided (278 bytes) …]\n98\n99\n", 95},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := operation.Collect("op", "python", "", tc.limits)
			for i := range tc.lines {
				o.Add(progress(protocol.ObsStdout, fmt.Sprint(i)))
			}
			o.Add(&operation.Message{Type: protocol.TypeComplete, Payload: &protocol.Complete{Result: &protocol.Result{Status: protocol.StatusOK, WorkspaceOK: true}}})
			if o.Output != tc.want || o.OutputCut != tc.cut {
				t.Errorf("output %q (cut %d), want %q (cut %d)", o.Output, o.OutputCut, tc.want, tc.cut)
			}
		})
	}
	// A traceback at the end of a long output survives, and stderr is marked.
	o := operation.Collect("op", "python", "", &operation.OutputLimits{Lines: 3})
	for i := range 10000 {
		o.Add(progress(protocol.ObsStdout, fmt.Sprint("step ", i)))
	}
	o.Add(progress(protocol.ObsStderr, "ValueError: boom"))
	o.Add(&operation.Message{Type: protocol.TypeFailed, Payload: &protocol.Failed{Reason: protocol.ReasonError, Error: "ValueError: boom", Result: &protocol.Result{Status: protocol.StatusError, Line: 3, WorkspaceOK: true}}})
	text := o.Text()
	for _, want := range []string{"FAILED (error)", "at line 3", "step 0\n", "[… 9995 lines elided (96 KiB) …]\nstep 9998\n", "step 9999\nstderr: ValueError: boom\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// One line longer than the budget is cut, not dropped.
	o = operation.Collect("op", "python", "", &operation.OutputLimits{Bytes: 20})
	o.Add(progress(protocol.ObsStdout, strings.Repeat("é", 100)))
	o.Add(&operation.Message{Type: protocol.TypeComplete, Payload: &protocol.Complete{Result: &protocol.Result{}}})
	if !strings.HasSuffix(o.Output, "…\n") || len(o.Output) > 11 {
		t.Errorf("a long line kept as %q", o.Output)
	}
}

func TestOutcomeVerdictOnce(t *testing.T) {
	errV := &protocol.Verdict{State: protocol.Error, Detector: "nonfinite", Message: "x is NaN", Evidence: []string{"x = nan", "hidden evidence"}}
	o := operation.Collect("op", "python", "", nil)
	for _, m := range []*operation.Message{
		{Type: protocol.TypeStart, Payload: &protocol.StatePayload{State: protocol.Started}},
		progress(protocol.ObsStdout, "x = 1"),
		{Type: protocol.TypeProgress, Payload: &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsStdout, Line: "x = nan"}, Verdict: errV}},
		{Type: protocol.TypeProgress, Payload: &protocol.Progress{Observation: &protocol.Observation{Kind: protocol.ObsArtifact, Artifact: &protocol.Artifact{Path: "fig.png", MIMEType: "image/png", Size: 3}}}},
		{Type: protocol.TypeFailed, Payload: &protocol.Failed{Reason: protocol.ReasonInterrupted, Error: "hot-fix: nonfinite: x is NaN", Verdict: errV,
			Result: &protocol.Result{Status: protocol.StatusInterrupted, DurationS: 1.5, WorkspaceOK: true}}},
	} {
		o.Add(m)
	}
	if len(o.Verdicts) != 1 || o.Verdict == nil || !o.HotFix || o.Status() != "failed" {
		t.Fatalf("outcome %+v: want one verdict, the hot-fix", o)
	}
	text := o.Text()
	if n := strings.Count(text, "x is NaN"); n != 1 {
		t.Errorf("the Error verdict is said %d times, want once:\n%s", n, text)
	}
	for _, want := range []string{"INTERRUPTED by perception after 1.50s", "perception: Error from nonfinite: x is NaN", "  evidence: hidden evidence", "file written: fig.png (image/png, 3 bytes)"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "evidence: x = nan") {
		t.Errorf("evidence already in the output is repeated:\n%s", text)
	}
}

// An agent checkpoint written before the Outcome moved here loads.
func TestOutcomeLoadsOldJSON(t *testing.T) {
	old := `{"operation_id":"op1","kernel":"python","code":"1/0","ok":false,"reason":"error","error":"ZeroDivisionError","line":1,
		"hot_fix":false,"verdict":{"state":"Error","detector":"language","message":"ZeroDivisionError","severity":1,"action":"interrupt"},
		"output":"stderr: ZeroDivisionError\n","duration_s":0.25,"artifacts":[{"path":"a.csv","mime_type":"text/csv","size":4}]}`
	var o operation.Outcome
	dec := json.NewDecoder(strings.NewReader(old))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		t.Fatal(err)
	}
	want := operation.Outcome{OperationID: "op1", Kernel: "python", Code: "1/0", Reason: protocol.ReasonError, Error: "ZeroDivisionError", Line: 1,
		Verdict: &protocol.Verdict{State: protocol.Error, Detector: "language", Message: "ZeroDivisionError", Severity: 1, Action: "interrupt"},
		Output:  "stderr: ZeroDivisionError\n", DurationS: 0.25, Artifacts: []protocol.Artifact{{Path: "a.csv", MIMEType: "text/csv", Size: 4}}}
	if diff := cmp.Diff(want, o, cmp.AllowUnexported(operation.Outcome{})); diff != "" {
		t.Errorf("old checkpoint (-want +got):\n%s", diff)
	}
	if !strings.Contains(o.Text(), "FAILED (error) after 0.25s at line 1") {
		t.Errorf("text of a loaded outcome: %s", o.Text())
	}
}
