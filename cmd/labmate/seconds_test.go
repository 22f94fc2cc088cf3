package main

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/job"
	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/game"
)

// TestConventionsSeconds: the records the CLI prints as JSON carry their times in one unit,
// seconds as a float, with the unit in the name (NAME_s) — no NAME_ns or NAME_ms — and read
// back what they wrote, and what older records wrote in nanoseconds.
func TestConventionsSeconds(t *testing.T) {
	const d = 1500 * time.Millisecond
	for _, c := range []struct {
		v      any    // a record with a time of 1.5 s
		legacy string // the same time as an older record wrote it
	}{
		{agent.Stats{Elapsed: d}, `{"elapsed_ns":1500000000}`},
		{agent.ModuleCall{Duration: d}, `{"duration_ns":1500000000}`},
		{agent.KernelState{Duration: d}, `{"duration_ns":1500000000}`},
		{agent.State{Elapsed: d}, `{"elapsed_ns":1500000000}`},
		{lab.Step{Propose: d}, `{"propose_ns":1500000000}`},
		{game.Summary{P50: d, P99: d, SetupP99: d}, `{"propose_p50_ns":1500000000,"propose_p99_ns":1500000000,"setup_p99_ns":1500000000}`},
		{job.Resources{WallTime: d}, `{"wall_time_ns":1500000000}`},
		{kernel.Snapshot{Duration: d}, `{"duration_ns":1500000000}`},
		{bench.HoldEvent{Duration: d}, `{"duration_ns":1500000000}`},
	} {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		found := false
		for k, x := range m {
			if regexp.MustCompile(`_(ns|us|ms)$`).MatchString(k) {
				t.Errorf("%T: %s is not in seconds: %s", c.v, k, b)
			}
			if strings.HasSuffix(k, "_s") && x == 1.5 {
				found = true
			}
		}
		if !found {
			t.Errorf("%T: no time of 1.5 s in seconds: %s", c.v, b)
		}
		for _, in := range []string{string(b), c.legacy} {
			back := reflect.New(reflect.TypeOf(c.v))
			if err := json.Unmarshal([]byte(in), back.Interface()); err != nil {
				t.Fatalf("%T: %s: %v", c.v, in, err)
			}
			again, _ := json.Marshal(back.Elem().Interface())
			if string(again) != string(b) {
				t.Errorf("%T: %s reads back as %s, want %s", c.v, in, again, b)
			}
		}
	}
	var r job.Resources
	if err := json.Unmarshal([]byte(`{"wall_time_s":60,"wall_tim":3}`), &r); err == nil || !strings.Contains(err.Error(), "wall_tim") {
		t.Errorf("job.Resources: an unknown field: %v", err)
	}
}

// TestConventionsSecondsSource: no struct of labmate's writes a time.Duration into JSON as
// it is (nanoseconds), and no JSON name carries another unit of time than seconds (but an
// UnmarshalJSON reads the names older records wrote).
func TestConventionsSecondsSource(t *testing.T) {
	unit := regexp.MustCompile(`_(ns|us|ms)$`)
	files := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "../.." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			if fn, ok := n.(*ast.FuncDecl); ok && fn.Name.Name == "UnmarshalJSON" {
				return false // what older records wrote is still read
			}
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			tag, _ := strconv.Unquote(field.Tag.Value)
			name, ok := reflect.StructTag(tag).Lookup("json")
			if !ok {
				return true
			}
			name, _, _ = strings.Cut(name, ",")
			if unit.MatchString(name) {
				t.Errorf("%s: JSON name %q: times are seconds (NAME_s)", fset.Position(field.Pos()), name)
			}
			if sel, ok := field.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Duration" && name != "-" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "time" {
					t.Errorf("%s: a time.Duration written as JSON %q is nanoseconds: tag it \"-\" and write NAME_s", fset.Position(field.Pos()), name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 200 {
		t.Fatalf("read only %d Go files", files)
	}
}
