// Package workflows is labmate's check of its skill library (examples/skills): for every skill
// that declares a workflow in its SKILL.md metadata, it copies the skill's scripts into a fresh
// workspace, runs the skill's command in a shell kernel in the sandbox through the operation
// pipeline — perception watches the run with the software's profile (Quantum ESPRESSO or
// LAMMPS), and its Hot-Fix stops a run that goes wrong —, reads the `RESULT NAME = VALUE` lines
// the scripts print, and compares each with the reference and tolerance the skill states.
//
// A skill declares its workflow under metadata:
//
//	workflow-code: qe | lammps            the software (the perception profile)
//	workflow-run: bash run.sh             the command, run in the workspace
//	workflow-quick: "true"                part of the fast subset (seconds each)
//	workflow-check-NAME: "Q = V ± T UNIT | CITATION"
//
// where Q is the quantity the scripts print as `RESULT Q = VALUE`, V the reference value, T the
// tolerance (absolute, in the same unit) and CITATION where V comes from.
package workflows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/kernel"
	"github.com/labmate/labmate/memory/skillmd"
	"github.com/labmate/labmate/operation"
	"github.com/labmate/labmate/perception"
	"github.com/labmate/labmate/protocol"
)

// Check is one reference a skill's result is compared with.
type Check struct {
	Quantity  string  `json:"quantity"` // the name after RESULT
	Reference float64 `json:"reference"`
	Tolerance float64 `json:"tolerance"` // absolute, in Unit
	Unit      string  `json:"unit,omitempty"`
	Citation  string  `json:"citation"`
}

// Workflow is a skill's runnable procedure.
type Workflow struct {
	Skill   string             `json:"skill"`
	Code    string             `json:"code"` // qe or lammps
	Profile perception.Profile `json:"profile"`
	Run     string             `json:"run"`
	Quick   bool               `json:"quick"`
	Checks  []Check            `json:"checks"`

	lib fs.FS // the library it was loaded from
}

// ParseCheck reads "Q = V ± T UNIT | CITATION" (key names the metadata key, for errors).
func ParseCheck(key, s string) (Check, error) {
	bad := func(why string) (Check, error) {
		return Check{}, fmt.Errorf("workflows: metadata %s %q: %s (want \"QUANTITY = VALUE ± TOLERANCE UNIT | CITATION\")", key, s, why)
	}
	spec, cite, ok := strings.Cut(s, "|")
	if !ok || strings.TrimSpace(cite) == "" {
		return bad("no citation after |")
	}
	q, rest, ok := strings.Cut(spec, "=")
	if !ok || strings.TrimSpace(q) == "" {
		return bad("no quantity before =")
	}
	v, rest, ok := strings.Cut(rest, "±")
	if !ok {
		return bad("no ± tolerance")
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return bad("no tolerance after ±")
	}
	ref, err1 := strconv.ParseFloat(strings.TrimSpace(v), 64)
	tol, err2 := strconv.ParseFloat(f[0], 64)
	if err := errors.Join(err1, err2); err != nil {
		return bad(err.Error())
	}
	if tol <= 0 {
		return bad("the tolerance must be positive")
	}
	return Check{Quantity: strings.TrimSpace(q), Reference: ref, Tolerance: tol, Unit: strings.Join(f[1:], " "), Citation: strings.TrimSpace(cite)}, nil
}

// Load reads every skill of library lib (NAME/SKILL.md, NAME/scripts/…; labmate's is
// examples/skills) that declares a workflow, sorted by name.
func Load(lib fs.FS) ([]Workflow, error) {
	var out []Workflow
	for _, name := range skillmd.Names(lib) {
		p := path.Join(name, skillmd.FileName)
		b, err := fs.ReadFile(lib, p)
		if err != nil {
			return nil, fmt.Errorf("workflows: %w", err)
		}
		sk, err := skillmd.Parse(p, b)
		if err != nil {
			return nil, fmt.Errorf("workflows: %w", err)
		}
		m := sk.Metadata
		if m["workflow-run"] == "" {
			continue
		}
		w := Workflow{Skill: name, Code: m["workflow-code"], Run: m["workflow-run"], Quick: m["workflow-quick"] == "true", lib: lib}
		if w.Profile, err = perception.ParseProfile(w.Code); err != nil {
			return nil, fmt.Errorf("workflows: %s: workflow-code: %w", p, err)
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if strings.HasPrefix(k, "workflow-check-") {
				c, err := ParseCheck(k, m[k])
				if err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
				w.Checks = append(w.Checks, c)
			}
		}
		if len(w.Checks) == 0 {
			return nil, fmt.Errorf("workflows: %s: workflow-run but no workflow-check-… reference", p)
		}
		out = append(out, w)
	}
	return out, nil
}

// Select returns the workflows named (all when names is empty), only the quick ones when quick
// is set, and an error naming any skill that has no workflow.
func Select(all []Workflow, names []string, quick bool) ([]Workflow, error) {
	var out []Workflow
	for _, n := range names {
		if !slices.ContainsFunc(all, func(w Workflow) bool { return w.Skill == n }) {
			var have []string
			for _, w := range all {
				have = append(have, w.Skill)
			}
			return nil, fmt.Errorf("workflows: no skill %q with a workflow; the skills are %s", n, strings.Join(have, ", "))
		}
	}
	for _, w := range all {
		if (len(names) == 0 || slices.Contains(names, w.Skill)) && (!quick || w.Quick) {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("workflows: nothing selected")
	}
	return out, nil
}

// Row is one check of one run.
type Row struct {
	Skill     string   `json:"skill"`
	Quantity  string   `json:"quantity"`
	Value     *float64 `json:"value"` // nil: the run printed no RESULT for it
	Reference float64  `json:"reference"`
	Tolerance float64  `json:"tolerance"`
	Unit      string   `json:"unit,omitempty"`
	Error     *float64 `json:"error,omitempty"` // Value − Reference
	Citation  string   `json:"citation"`
	WallS     float64  `json:"wall_s"` // the skill's run
	Pass      bool     `json:"pass"`
}

// Result is one skill's run.
type Result struct {
	Skill   string  `json:"skill"`
	Code    string  `json:"code"`
	Rows    []Row   `json:"rows"`
	WallS   float64 `json:"wall_s"`
	Outcome string  `json:"outcome"` // the operation's terminal message type
	// Perception is what perception said at the end of the run (Normal, Warning, Error) and
	// why; Interrupted is set when its Hot-Fix stopped the run.
	Perception  string `json:"perception"`
	Interrupted bool   `json:"interrupted,omitempty"`
	Error       string `json:"error,omitempty"`
	Pass        bool   `json:"pass"`
}

// Options configure Run. Start and Kernel are required.
type Options struct {
	// Start starts the shell kernel each skill runs in (shell.Start).
	Start func(context.Context, *kernel.Options) (kernel.Kernel, error)
	// Kernel are the kernel options with the sandbox; Workspace is set per skill.
	Kernel kernel.Options
	// Dir keeps every skill's workspace in Dir/SKILL; default: a temporary directory, removed.
	Dir string
	// Timeout bounds each skill's run (default 10 minutes).
	Timeout time.Duration
	// Progress, when set, is called with each result as it is ready.
	Progress func(*Result)
}

// Run runs the workflows one after the other (one scientific code at a time) and returns
// their results in order. A skill that fails is a Result with Pass false; the error is for a
// run that cannot go on (a cancelled context, a missing sandbox).
func Run(ctx context.Context, wfs []Workflow, opts *Options) ([]*Result, error) {
	if opts == nil || opts.Start == nil || opts.Kernel.Sandbox == nil {
		return nil, errors.New("workflows: Options.Start and Options.Kernel.Sandbox are required")
	}
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "labmate-workflows-"); err != nil {
			return nil, fmt.Errorf("workflows: %w", err)
		}
		defer os.RemoveAll(dir)
	}
	var out []*Result
	for i := range wfs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r := runOne(ctx, &wfs[i], filepath.Join(dir, wfs[i].Skill), opts)
		out = append(out, r)
		if opts.Progress != nil {
			opts.Progress(r)
		}
	}
	return out, ctx.Err()
}

func runOne(ctx context.Context, w *Workflow, dir string, opts *Options) *Result {
	start := time.Now()
	r := &Result{Skill: w.Skill, Code: w.Code}
	results := map[string]float64{}
	defer func() {
		r.WallS = time.Since(start).Seconds()
		r.Pass = r.Error == "" && !r.Interrupted && r.Outcome == string(protocol.TypeComplete)
		for _, c := range w.Checks {
			row := Row{Skill: w.Skill, Quantity: c.Quantity, Reference: c.Reference, Tolerance: c.Tolerance, Unit: c.Unit, Citation: c.Citation, WallS: r.WallS}
			if v, ok := results[c.Quantity]; ok {
				e := v - c.Reference
				row.Value, row.Error = &v, &e
				row.Pass = math.Abs(e) <= c.Tolerance && r.Outcome == string(protocol.TypeComplete) && !r.Interrupted
			}
			r.Pass = r.Pass && row.Pass
			r.Rows = append(r.Rows, row)
		}
	}()
	if err := prepare(w, dir); err != nil {
		r.Error = err.Error()
		return r
	}
	plan, err := operation.Check(&protocol.Request{Kind: "exec", Kernel: "shell", Code: w.Run, Profile: string(w.Profile),
		TimeoutS: cmp.Or(opts.Timeout, 10*time.Minute).Seconds()})
	if err != nil {
		r.Error = err.Error()
		return r
	}
	ko := opts.Kernel
	ko.Workspace = dir
	k, err := opts.Start(ctx, &ko)
	if err != nil {
		r.Error = fmt.Sprintf("starting the shell kernel: %v", err)
		return r
	}
	defer k.Close()
	verdict := protocol.Verdict{State: protocol.Normal}
	var tail []string
	for m := range operation.Exec(ctx, k, plan, nil) {
		switch p := m.Payload.(type) {
		case *protocol.Progress:
			if p.Verdict != nil {
				verdict = *p.Verdict
			}
			if o := p.Observation; o != nil && (o.Kind == protocol.ObsStdout || o.Kind == protocol.ObsStderr) {
				if q, v, ok := resultLine(o.Line); ok {
					results[q] = v
				}
				tail = append(tail[max(0, len(tail)-3):], o.Line)
			}
		case *protocol.Complete:
			r.Outcome = string(m.Type)
		case *protocol.Failed:
			r.Outcome = string(m.Type)
			r.Interrupted = p.Reason == protocol.ReasonInterrupted
			r.Error = fmt.Sprintf("%s: %s; last lines: %s", p.Reason, p.Error, strings.Join(tail, " | "))
			if p.Verdict != nil {
				verdict = *p.Verdict
			}
		}
	}
	r.Perception = string(verdict.State)
	if verdict.State != protocol.Normal && verdict.Message != "" {
		r.Perception += " (" + verdict.Detector + ": " + verdict.Message + ")"
	}
	return r
}

// resultLine reads "RESULT NAME = VALUE".
func resultLine(line string) (string, float64, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "RESULT ")
	if !ok {
		return "", 0, false
	}
	q, v, ok := strings.Cut(rest, "=")
	if !ok {
		return "", 0, false
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return "", 0, false
	}
	x, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return "", 0, false
	}
	return strings.TrimSpace(q), x, true
}

// prepare copies the skill's scripts into dir.
func prepare(w *Workflow, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("workflows: %w", err)
	}
	if err := skillmd.CopyScripts(w.lib, w.Skill, dir); err != nil {
		return fmt.Errorf("workflows: %w", err)
	}
	return nil
}
