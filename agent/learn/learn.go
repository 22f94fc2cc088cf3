// Package learn is the learning loop the agent and the servers share: what execution feedback
// teaches memory, and what memory puts in front of the model before it acts. It implements
// agent.Memory over a memory.Store, and gives models the memory tools (search_memory,
// search_skills, save_fact, save_skill, update_skill) for the agent and for MCP.
//
// What a step teaches, all written through memory/consolidate (deterministically, or with
// ADD/UPDATE/DELETE/NOOP decided by a model when Options.Infer is set):
//
//   - a cell that failed (an error, a Hot-Fix, a result the reviewer rejected) and the repair
//     that then worked become a guardrail: a boundary fact when the repair changed a parameter
//     ("dt = 0.06 failed …; dt = 0.01 worked"), with the settings in Fact.Tried and Fact.Worked,
//     else a warning naming the error and the fix; its provenance names both operations;
//   - the accepted step becomes a skill created or revised by content (consolidate.Skill), its
//     body holding when it applies, the procedure, its parameters, the validation checks and the
//     failure modes (the guardrails that apply), and the counts of the skills recalled for it
//     move with its outcome;
//   - what the step established becomes an observation, and a value it compared against (an
//     experimental value, a literature yield) a reference, which recall presents as a value to
//     consult, never as a result to report;
//   - failures no repair fixed become warnings.
//
// Before acting: Recall gives the planner and the code module the guardrails, references, facts
// and skills relevant to the task and to the step; Guard flags a cell that repeats a setting a
// guardrail records as failing.
package learn

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labmate/labmate/agent"
	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/llm"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/builtin"
	"github.com/labmate/labmate/memory/consolidate"
	"github.com/labmate/labmate/memory/statement"
)

// Options configure a Memory; nil means the defaults.
type Options struct {
	// Namespace is where facts are written (default "user"); skills go to SkillNamespace
	// (default Namespace + "/skills").
	Namespace, SkillNamespace string
	// Read are the namespaces recalled (default Namespace, which holds SkillNamespace when it is
	// the default): add a frozen namespace to use the memory another model wrote. The
	// built-in skill library's namespace (memory/builtin) is always read: a store that holds it
	// (labmate memory import --builtin) lends its skills to every task.
	Read []string
	// Model names the model whose runs write (provenance and actor).
	Model string
	// Infer, when set, consolidates with this model deciding ADD/UPDATE/DELETE/NOOP; nil:
	// deterministic consolidation.
	Infer llm.Model
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Memory is the agent's memory over a store.
type Memory struct {
	s    memory.Store
	opts Options
}

var _ agent.Memory = (*Memory)(nil)

// New returns the learning loop over s.
func New(s memory.Store, opts *Options) *Memory {
	m := &Memory{s: s}
	if opts != nil {
		m.opts = *opts
	}
	o := &m.opts
	if o.Namespace == "" {
		o.Namespace = "user"
	}
	if o.SkillNamespace == "" {
		o.SkillNamespace = o.Namespace + "/skills"
	}
	if len(o.Read) == 0 {
		o.Read = []string{o.Namespace}
		if !strings.HasPrefix(o.SkillNamespace, o.Namespace+"/") {
			o.Read = append(o.Read, o.SkillNamespace)
		}
	}
	if !slices.Contains(o.Read, builtin.Namespace) {
		o.Read = append(slices.Clone(o.Read), builtin.Namespace)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return m
}

// Store is the memory written.
func (m *Memory) Store() memory.Store { return m.s }

func (m *Memory) actor() string {
	if m.opts.Model == "" {
		return "agent"
	}
	return "agent:" + m.opts.Model
}

// Limits of what recall shows: enough for the guardrails and procedures that matter, few enough
// to keep the prompts lean.
const (
	recallGuardrails = 4
	recallReferences = 3
	recallFacts      = 3
	recallSkills     = 2
	skillLines       = 1400 // bytes of a skill's body shown
)

// relevant keeps what shares at least two content words (or an entity) with the query: a
// full-text search also finds entries that share only a common word.
func relevant(query, text string) bool { return statement.Overlap(query, text) >= 2 }

// Recall implements agent.Memory: guardrails (to avoid), references (to consult, not to report),
// facts and skills relevant to the task, or to one of its steps.
func (m *Memory) Recall(ctx context.Context, q *agent.RecallQuery) (*agent.Recollection, error) {
	text := q.Task
	if q.Step != nil {
		text = q.Step.Title + ". " + q.Step.Action + ". " + q.Step.Checkpoint + ". " + q.Task
	}
	find := func(kinds []memory.Kind, limit int) ([]*memory.Result, error) {
		var out []*memory.Result
		for r, err := range m.s.Search(ctx, &memory.Query{Text: text, Namespaces: m.opts.Read, Kinds: kinds, Limit: 3 * limit}) {
			if err != nil {
				return nil, fmt.Errorf("recalling from memory: %w", err)
			}
			body := ""
			if r.Fact != nil {
				body = r.Fact.Text + " " + strings.Join(r.Fact.Tags, " ")
			} else {
				body = r.Skill.Name + " " + r.Skill.Description
			}
			if relevant(text, body) && len(out) < limit {
				out = append(out, r)
			}
		}
		return out, nil
	}
	guards, err := find([]memory.Kind{memory.KindWarning, memory.KindBoundary}, recallGuardrails)
	if err != nil {
		return nil, err
	}
	refs, err := find([]memory.Kind{memory.KindReference}, recallReferences)
	if err != nil {
		return nil, err
	}
	facts, err := find([]memory.Kind{memory.KindObservation, memory.KindParameter}, recallFacts)
	if err != nil {
		return nil, err
	}
	skills, err := find([]memory.Kind{memory.KindSkill}, recallSkills)
	if err != nil {
		return nil, err
	}
	rec := &agent.Recollection{}
	var b strings.Builder
	if len(guards) > 0 {
		b.WriteString("Guardrails — what failed before and what fixed it (do not repeat the failures):\n")
		for _, r := range guards {
			f := r.Fact
			fmt.Fprintf(&b, "- [%s %s] %s%s\n", f.Kind, f.ID, f.Text, counts(f.Successes, f.Failures))
			rec.Guardrails = append(rec.Guardrails, f.ID)
		}
	}
	if len(refs) > 0 {
		b.WriteString("References — values to consult and compare against; do not report them as your result:\n")
		for _, r := range refs {
			fmt.Fprintf(&b, "- [reference %s] %s (consult; do not report as your result)\n", r.Fact.ID, r.Fact.Text)
		}
	}
	if len(facts) > 0 {
		b.WriteString("Facts from earlier runs:\n")
		for _, r := range facts {
			fmt.Fprintf(&b, "- [%s %s] %s%s\n", r.Fact.Kind, r.Fact.ID, r.Fact.Text, counts(r.Fact.Successes, r.Fact.Failures))
		}
	}
	if len(skills) > 0 {
		b.WriteString("Skills — procedures that passed their checks before (adapt them to this task):\n")
		for _, r := range skills {
			sk := r.Skill
			fmt.Fprintf(&b, "- skill %s (version %d, %d uses: %d succeeded, %d failed): %s\n", sk.Name, sk.Version, sk.Uses, sk.Successes, sk.Failures, sk.Description)
			for l := range strings.Lines(textcut.Head(sk.Body, skillLines)) {
				fmt.Fprintf(&b, "    %s", l)
			}
			b.WriteString("\n")
			rec.Skills = append(rec.Skills, sk.ID)
		}
	}
	rec.Text = b.String()
	return rec, nil
}

func counts(s, f int) string {
	if s+f == 0 {
		return ""
	}
	return fmt.Sprintf(" (held %d times, failed %d)", s, f)
}

// setting is "name = value" split.
func setting(s string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(s, "=")
	return strings.TrimSpace(name), strings.TrimSpace(value), ok
}

// sameValue compares two values as numbers when both are, else as written.
func sameValue(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 == nil && err2 == nil {
		return x == y || x != 0 && (x-y)/x < 1e-12 && (y-x)/x < 1e-12
	}
	return strings.Trim(a, `'"`) == strings.Trim(b, `'"`)
}

var callRe = regexp.MustCompile(`\b([A-Za-z_][A-Za-z0-9_.]*)\s*\(`)

// functions are the functions a cell calls, without the language's own.
func functions(code string) []string {
	var out []string
	for _, m := range callRe.FindAllStringSubmatch(code, -1) {
		name := m[1]
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if builtins[name] || slices.Contains(out, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

var builtins = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`print range len int float str list dict set tuple abs min max sum round sorted enumerate zip map
		isinstance open format disp printf fprintf sprintf num2str numel size zeros ones length isfinite isnan sqrt exp log sin cos
		array linspace arange append flush time sleep if for while return labmate_log log10 mod floor ceil any all`) {
		builtins[w] = true
	}
}

// Guard implements agent.Memory: the recorded failing settings a cell repeats, and the other
// guardrails about the parameters and functions it uses.
func (m *Memory) Guard(ctx context.Context, c *agent.Cell) (*agent.Caution, error) {
	about := c.Task + " " + c.Step
	out := &agent.Caution{}
	shown := map[string]bool{}
	var notes []string
	check := func(tag string, settings map[string]string) error {
		for r, err := range m.s.Search(ctx, &memory.Query{Namespaces: m.opts.Read, Kinds: []memory.Kind{memory.KindWarning, memory.KindBoundary}, Tags: []string{tag}, Limit: 50}) {
			if err != nil {
				return err
			}
			// A guardrail about the same task holds in any kernel: dt = 0.06 makes explicit
			// Euler unstable in Octave as in Python.
			f := r.Fact
			if !relevant(about, f.Text) {
				continue
			}
			repeated := false
			for _, t := range f.Tried {
				name, val, ok := setting(t)
				if v, set := settings[name]; ok && set && sameValue(v, val) {
					out.Repeats = append(out.Repeats, agent.Repeat{Setting: name + " = " + v, Fact: f.ID, Text: f.Text, Worked: f.Worked})
					repeated = true
				}
			}
			if !repeated && !shown[f.ID] {
				shown[f.ID] = true
				notes = append(notes, fmt.Sprintf("- [%s %s] %s", f.Kind, f.ID, f.Text))
			}
		}
		return nil
	}
	settings := map[string]string{}
	for _, s := range consolidate.Settings(c.Code) {
		if name, val, ok := setting(s); ok {
			settings[name] = val
		}
	}
	for name := range settings {
		if err := check("param:"+name, settings); err != nil {
			return nil, err
		}
	}
	for _, fn := range functions(c.Code) {
		if err := check("fn:"+fn, settings); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(out.Repeats, func(a, b agent.Repeat) int { return strings.Compare(a.Setting+a.Fact, b.Setting+b.Fact) })
	out.Repeats = slices.CompactFunc(out.Repeats, func(a, b agent.Repeat) bool { return a.Setting == b.Setting && a.Fact == b.Fact })
	for _, r := range out.Repeats {
		delete(shown, r.Fact)
	}
	var keep []string
	for _, n := range notes {
		for id := range shown {
			if strings.Contains(n, " "+id+"] ") {
				keep = append(keep, n)
			}
		}
	}
	out.Text = strings.Join(keep, "\n")
	return out, nil
}

// Learn implements agent.Memory.
func (m *Memory) Learn(ctx context.Context, l *agent.Lesson) error {
	now := m.opts.Now().UTC()
	prov := memory.Provenance{Operations: l.Operations, Session: l.RunID, Model: m.opts.Model, Time: now}
	var facts []*memory.Fact
	var guardIdx []int // indices in facts of the guardrails
	ctxText := stepContext(l)
	// Failures, each once (by its cell), repaired by the accepted cell or not at all.
	seen := map[string]bool{}
	for _, f := range l.Failures {
		if seen[f.Code] {
			continue
		}
		seen[f.Code] = true
		g := guardrail(ctxText, &f, l)
		g.Provenance = memory.Provenance{Operations: compact(f.OperationID, firstOf(l.Operations)), Session: l.RunID, Model: m.opts.Model, Time: now}
		guardIdx = append(guardIdx, len(facts))
		facts = append(facts, g)
	}
	if l.Accepted {
		facts = append(facts, &memory.Fact{Text: textcut.Head(fmt.Sprintf("%s — %s: %s", textcut.Head(l.Task, 200), l.Step, l.Summary), 1000), Kind: memory.KindObservation,
			Evidence: []string{"checkpoint: " + textcut.Head(l.Checkpoint, 300)}, Tags: kernelTags(l.Kernel), Provenance: prov})
		for _, r := range references(l) {
			facts = append(facts, &memory.Fact{Text: r, Kind: memory.KindReference, Tags: []string{"reference"},
				Evidence: []string{"task: " + textcut.Head(l.Task, 300)}, Provenance: prov})
		}
	}
	in := &consolidate.Input{Namespace: m.opts.Namespace, Facts: facts, Provenance: prov, Actor: m.actor()}
	opts := &consolidate.Options{}
	if m.opts.Infer != nil {
		in.Infer, in.Trace, opts.Model = true, trace(l), m.opts.Infer
	}
	rep, err := consolidate.Consolidate(ctx, m.s, in, opts)
	if err != nil {
		return fmt.Errorf("storing what step %q taught: %w", l.Step, err)
	}
	// The guardrails as written (an id each), for the skill's failure modes.
	var modes []string
	if !in.Infer {
		for _, i := range guardIdx {
			if i < len(rep.Actions) {
				modes = append(modes, fmt.Sprintf("%s [%s]", facts[i].Text, rep.Actions[i].ID))
			}
		}
	}
	modes = append(modes, m.applicable(ctx, l)...)
	if err := m.countUses(ctx, l); err != nil {
		return err
	}
	if !l.Accepted || strings.TrimSpace(l.Code) == "" {
		return nil
	}
	ev := fmt.Sprintf("run %s, operation %s: %s", l.RunID, firstOf(l.Operations), textcut.Head(l.Summary, 300))
	_, err = consolidate.Skill(ctx, m.s, &consolidate.SkillInput{Namespace: m.opts.SkillNamespace, Title: l.Step, Action: l.Action,
		Checkpoint: l.Checkpoint, Summary: l.Summary, Task: l.Task, Kernel: l.Kernel, Code: l.Code, FailureModes: uniqStrings(modes),
		Evidence: ev, Provenance: prov, Actor: m.actor(), Prefer: l.Recalled})
	if err != nil {
		return fmt.Errorf("storing the step's skill: %w", err)
	}
	return nil
}

// applicable are the recalled guardrails about parameters the accepted cell sets: the skill's
// failure modes beside the new ones.
func (m *Memory) applicable(ctx context.Context, l *agent.Lesson) []string {
	names := map[string]bool{}
	for _, s := range consolidate.Settings(l.Code) {
		if n, _, ok := setting(s); ok {
			names[n] = true
		}
	}
	var out []string
	for _, id := range l.Recalled {
		e, err := m.s.Get(ctx, &memory.GetParams{ID: id})
		if err != nil || e.Fact == nil {
			continue
		}
		for _, t := range e.Fact.Tried {
			if n, _, ok := setting(t); ok && names[n] {
				out = append(out, fmt.Sprintf("%s [%s]", e.Fact.Text, e.Fact.ID))
				break
			}
		}
	}
	return out
}

// countUses moves the counts of the skills recalled for the step: a success when the accepted
// cell is of their procedure family, a failure when a failed cell was.
func (m *Memory) countUses(ctx context.Context, l *agent.Lesson) error {
	for _, id := range l.Recalled {
		e, err := m.s.Get(ctx, &memory.GetParams{ID: id})
		if err != nil || e.Skill == nil {
			continue
		}
		proc := consolidate.ProcedureCode(e.Skill.Body)
		var outcomes []bool
		for _, f := range l.Failures {
			if consolidate.FamilySimilarity(proc, f.Code) >= consolidate.SameFamily {
				outcomes = append(outcomes, false)
				break
			}
		}
		if l.Accepted && l.Code != "" && consolidate.FamilySimilarity(proc, l.Code) >= consolidate.SameFamily {
			outcomes = append(outcomes, true)
		}
		for _, ok := range outcomes {
			_, err := m.s.Use(ctx, &memory.UseParams{ID: id, Success: ok, Actor: m.actor()})
			if err != nil && !errors.Is(err, memory.ErrFrozen) {
				return fmt.Errorf("counting a use of skill %s: %w", e.Skill.Name, err)
			}
		}
	}
	return nil
}

func stepContext(l *agent.Lesson) string {
	c := l.Step
	if a := strings.TrimSpace(l.Action); a != "" {
		c += " (" + textcut.Head(strings.TrimSuffix(a, "."), 160) + ")"
	}
	return fmt.Sprintf("%s, for the task %q", c, textcut.Head(l.Task, 160))
}

func kernelTags(k string) []string {
	if k == "" {
		return nil
	}
	return []string{"kernel:" + k}
}

func firstOf(xs []string) string {
	if len(xs) == 0 {
		return ""
	}
	return xs[0]
}

func compact(xs ...string) []string {
	var out []string
	for _, x := range xs {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func uniqStrings(xs []string) []string {
	var out []string
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// why a failed cell failed, in one line.
func why(f *agent.Attempt) string {
	switch {
	case f.HotFix && f.Verdict != nil:
		return fmt.Sprintf("perception stopped the run (%s: %s)", f.Verdict.Detector, textcut.Head(f.Verdict.Message, 200))
	case f.Review != "":
		return "the reviewer rejected the result: " + textcut.Head(firstLine(f.Review), 240)
	case f.Error != "":
		return fmt.Sprintf("%s: %s", orStr(f.Reason, "error"), textcut.Head(lastLine(f.Error), 240))
	case f.Verdict != nil:
		return fmt.Sprintf("%s (%s: %s)", orStr(f.Reason, "failed"), f.Verdict.Detector, textcut.Head(f.Verdict.Message, 200))
	}
	return orStr(f.Reason, "failed")
}

func orStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// guardrail is the fact a failed cell teaches: a boundary when the repair changed a parameter
// (what failed, why, what worked), else a warning (the failure, why, the fix).
func guardrail(ctxText string, f *agent.Attempt, l *agent.Lesson) *memory.Fact {
	g := &memory.Fact{Kind: memory.KindWarning, Tags: kernelTags(f.Kernel)}
	failed := map[string]string{}
	var order []string
	for _, s := range consolidate.Settings(f.Code) {
		if n, v, ok := setting(s); ok {
			failed[n] = v
			order = append(order, n)
		}
	}
	fixed := map[string]string{}
	if l.Accepted {
		for _, s := range consolidate.Settings(l.Code) {
			if n, v, ok := setting(s); ok {
				fixed[n] = v
			}
		}
	}
	for _, n := range order {
		if v, ok := fixed[n]; ok && !sameValue(v, failed[n]) {
			g.Tried = append(g.Tried, n+" = "+failed[n])
			g.Worked = append(g.Worked, n+" = "+v)
			g.Tags = append(g.Tags, "param:"+n)
		}
	}
	for _, fn := range functions(f.Code) {
		if len(g.Tags) < 12 {
			g.Tags = append(g.Tags, "fn:"+fn)
		}
	}
	reason := why(f)
	switch {
	case len(g.Tried) > 0:
		g.Kind = memory.KindBoundary
		g.Text = fmt.Sprintf("%s in %s: %s failed — %s; %s worked", ctxText, f.Kernel, strings.Join(g.Tried, ", "), reason, strings.Join(g.Worked, ", "))
		if l.Summary != "" {
			g.Text += " (" + textcut.Head(l.Summary, 200) + ")"
		}
	case l.Accepted:
		g.Text = fmt.Sprintf("%s in %s: a first cell failed — %s; the repair that worked: %s", ctxText, f.Kernel, reason, textcut.Head(changed(f.Code, l.Code), 300))
	default:
		g.Text = fmt.Sprintf("%s in %s: this approach failed and no repair worked in the run — %s; the cell began: %s", ctxText, f.Kernel, reason, textcut.Head(firstLine(f.Code), 160))
	}
	if f.Verdict != nil {
		for _, e := range f.Verdict.Evidence[:min(3, len(f.Verdict.Evidence))] {
			g.Evidence = append(g.Evidence, textcut.Head(e, 300))
		}
	}
	if f.Error != "" {
		g.Evidence = append(g.Evidence, "error: "+textcut.Head(lastLine(f.Error), 300))
	}
	if f.Review != "" {
		g.Evidence = append(g.Evidence, "review: "+textcut.Head(f.Review, 300))
	}
	if l.Accepted {
		g.Evidence = append(g.Evidence, fmt.Sprintf("fixed by operation %s: %s", firstOf(l.Operations), textcut.Head(l.Summary, 200)))
	}
	g.Text = textcut.Head(g.Text, 1200)
	return g
}

// changed is what the repair changed: the lines of fix that were not in the failed cell.
func changed(failed, fix string) string {
	old := map[string]bool{}
	for l := range strings.Lines(failed) {
		old[strings.TrimSpace(l)] = true
	}
	var out []string
	for l := range strings.Lines(fix) {
		if t := strings.TrimSpace(l); t != "" && !old[t] {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return "the same code run again"
	}
	return strings.Join(out, "; ")
}

var refCue = regexp.MustCompile(`(?i)\b(experiment(al|ally)?|literature|reported|reference|measured|published|tabulated|known value|expected value)\b`)
var hasNumber = regexp.MustCompile(`\d`)

// references are the values the step compared against: those the reviewer named, and the
// sentences of the task that give a value from outside (an experimental or literature value).
func references(l *agent.Lesson) []string {
	var out []string
	for _, r := range l.References {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, textcut.Head(r, 600))
		}
	}
	for _, s := range sentences(l.Task) {
		if refCue.MatchString(s) && hasNumber.MatchString(s) {
			out = append(out, textcut.Head("Reference value a task gave: "+s, 600))
		}
	}
	return uniqStrings(out)
}

func sentences(text string) []string {
	var out []string
	start := 0
	for i := 0; i < len(text); i++ {
		if (text[i] == '.' || text[i] == ';' || text[i] == '?' || text[i] == '!') && (i+1 == len(text) || text[i+1] == ' ' || text[i+1] == '\n') {
			if s := strings.TrimSpace(text[start : i+1]); s != "" {
				out = append(out, s)
			}
			start = i + 1
		}
	}
	if s := strings.TrimSpace(text[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// trace is the lesson as text, for a model that consolidates.
func trace(l *agent.Lesson) string {
	var b strings.Builder
	fmt.Fprintf(&b, "task: %s\nstep: %s — %s\ncheckpoint: %s\n", l.Task, l.Step, l.Action, l.Checkpoint)
	for _, f := range l.Failures {
		fmt.Fprintf(&b, "failed operation %s (%s): %s\ncode:\n%s\n", f.OperationID, f.Kernel, why(&f), textcut.Head(f.Code, 1500))
	}
	if l.Accepted {
		fmt.Fprintf(&b, "accepted operation %s (%s): %s\ncode:\n%s\n", firstOf(l.Operations), l.Kernel, l.Summary, textcut.Head(l.Code, 1500))
	}
	for _, r := range l.References {
		fmt.Fprintf(&b, "reference value compared against: %s\n", r)
	}
	return b.String()
}
