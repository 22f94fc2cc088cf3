package consolidate

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/labmate/labmate/internal/rank"
	"github.com/labmate/labmate/internal/textcut"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// SkillInput is a procedure a step validated: what it did, the cell that did it and what
// checked it, to be stored as a skill. Skills are matched by content, never by title: a step
// called "integrate" of another task, doing something else, gets a skill of its own.
type SkillInput struct {
	Namespace string
	// Title, Action, Checkpoint and Summary are the step's: its name, what it did, how it was
	// checked and what it established.
	Title, Action, Checkpoint, Summary string
	Task                               string
	Kernel, Code                       string
	// FailureModes are the guardrails that apply (a warning or boundary fact's text, with its id).
	FailureModes []string
	// Evidence is one line on the run that validated it ("run R, operation O: summary").
	Evidence   string
	Provenance memory.Provenance
	Actor      string
	// Prefer are skills to match first (those recalled for the step).
	Prefer []string
}

// SkillResult is what Skill did.
type SkillResult struct {
	Skill *memory.Skill
	// Created: a new skill; Revised: a new version of the skill of the same procedure family
	// (its evidence and failure modes kept, the procedure it replaces kept as a variant).
	Created, Revised bool
	Action           Action
}

// FamilySimilarity is how alike two cells are as procedures: the overlap of the names they use
// (functions, variables, keywords of the language excluded; numbers excluded, so that the same
// procedure with other parameters is the same family).
func FamilySimilarity(a, b string) float64 {
	x, y := codeNames(a), codeNames(b)
	return rank.Jaccard(x, y)
}

// SameFamily is the FamilySimilarity at or above which two procedures are one family.
const SameFamily = 0.6

var identRe = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

var codeKeywords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`if else elif for while in range print import from as def return and or not is None True False
		end endif endfor endwhile function endfunction disp printf fprintf sprintf num2str true false break continue pass
		lambda with try except finally raise class global local echo then fi do done`) {
		codeKeywords[w] = true
	}
}

func codeNames(code string) map[string]bool {
	out := map[string]bool{}
	for line := range strings.Lines(code) {
		// Strings and comments carry words, not names.
		if i := strings.IndexAny(line, "#%"); i >= 0 && !strings.Contains(line[:i], "'") && !strings.Contains(line[:i], `"`) {
			line = line[:i]
		}
		line = quoted.ReplaceAllString(line, " ")
		for _, w := range identRe.FindAllString(line, -1) {
			if !codeKeywords[w] {
				out[w] = true
			}
		}
	}
	return out
}

var quoted = regexp.MustCompile(`'[^']*'|"[^"]*"`)

// ProcedureCode is the code of a skill's procedure: the first fenced block of its body.
func ProcedureCode(body string) string {
	_, rest, ok := strings.Cut(body, "```")
	if !ok {
		return ""
	}
	if i := strings.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[i+1:]
	}
	code, _, _ := strings.Cut(rest, "```")
	return strings.TrimRight(code, "\n")
}

// Skill stores the procedure of a validated step: a new version of the skill of the same
// procedure family (by content: the kernel and the names the code uses), or a new skill with a
// unique, descriptive name. Nothing is overwritten: a revision keeps the skill's evidence and
// failure modes, and the procedure it replaces as a variant; the history keeps every version.
func Skill(ctx context.Context, s memory.Store, in *SkillInput) (*SkillResult, error) {
	if err := memory.ValidNamespace(in.Namespace); err != nil {
		return nil, err
	}
	if strings.TrimSpace(in.Code) == "" {
		return nil, fmt.Errorf("%w: a skill needs the code of its procedure", memory.ErrBadSkill)
	}
	kernelTag := "kernel:" + in.Kernel
	// Candidates: the skills preferred, then the nearest by text.
	var cands []*memory.Skill
	seen := map[string]bool{}
	for _, id := range in.Prefer {
		e, err := s.Get(ctx, &memory.GetParams{ID: id})
		if err == nil && e.Skill != nil && e.Skill.Status == memory.StatusActive && e.Skill.Namespace == in.Namespace && !seen[id] {
			seen[id] = true
			cands = append(cands, e.Skill)
		}
	}
	query := in.Title + " " + in.Action + " " + strings.Join(slices.Sorted(mapKeys(codeNames(in.Code))), " ")
	for r, err := range s.Search(ctx, &memory.Query{Text: query, Namespaces: []string{in.Namespace}, Kinds: []memory.Kind{memory.KindSkill}, Limit: 8}) {
		if err != nil {
			return nil, err
		}
		if r.Skill.Namespace == in.Namespace && !seen[r.Skill.ID] {
			seen[r.Skill.ID] = true
			cands = append(cands, r.Skill)
		}
	}
	var family *memory.Skill
	best := 0.0
	for _, c := range cands {
		if !slices.Contains(c.Tags, kernelTag) {
			continue
		}
		if sim := FamilySimilarity(ProcedureCode(c.Body), in.Code); sim >= SameFamily && sim > best {
			family, best = c, sim
		}
	}
	if family != nil {
		return revise(ctx, s, in, family)
	}
	name, err := uniqueName(ctx, s, in)
	if err != nil {
		return nil, err
	}
	sk := &memory.Skill{Namespace: in.Namespace, Name: name, Description: describe(in), Tags: []string{kernelTag}, Provenance: in.Provenance,
		Body: skillBody(in, nil, []string{in.Evidence}, in.FailureModes)}
	r, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: sk, Actor: in.Actor, Reason: "a validated procedure: " + textcut.Head(in.Evidence, 300)})
	if err != nil {
		return nil, err
	}
	return &SkillResult{Skill: r.Skill, Created: r.Created, Revised: !r.Created && r.Changed,
		Action: Action{Event: memory.EventAdd, ID: r.Skill.ID, Text: r.Skill.Name, Reason: "new procedure family"}}, nil
}

func mapKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// revise makes a new version of a skill of the same family with the new evidence.
func revise(ctx context.Context, s memory.Store, in *SkillInput, cur *memory.Skill) (*SkillResult, error) {
	oldCode := ProcedureCode(cur.Body)
	variants := section(cur.Body, "Variants that also passed")
	if strings.TrimSpace(oldCode) != strings.TrimSpace(in.Code) {
		variants = append([]string{"```" + lang(in.Kernel) + "\n" + oldCode + "\n```"}, variants...)
		if len(variants) > 3 {
			variants = variants[:3]
		}
	}
	evidence := union(section(cur.Body, "Evidence"), []string{"- " + in.Evidence})
	failures := union(section(cur.Body, "Failure modes (guardrails)"), bullets(in.FailureModes))
	body := skillBody(in, variants, trimBullets(evidence), trimBullets(failures))
	sk := *cur
	sk.Body, sk.Description = body, describe(in)
	sk.Provenance = cur.Provenance
	sk.Provenance.Absorb(in.Provenance)
	r, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: &sk, Actor: in.Actor,
		Reason: fmt.Sprintf("revised by a validated run of the same procedure: %s", textcut.Head(in.Evidence, 300))})
	if errors.Is(err, memory.ErrFrozen) {
		// The family lives in a frozen namespace: a skill of our own instead.
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	return &SkillResult{Skill: r.Skill, Revised: r.Changed,
		Action: Action{Event: memory.EventVersion, ID: r.Skill.ID, Text: r.Skill.Name, Reason: "same procedure family", Related: cur.ID}}, nil
}

func bullets(xs []string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, "- "+x)
	}
	return out
}

func trimBullets(xs []string) []string {
	var out []string
	for _, x := range xs {
		out = append(out, strings.TrimPrefix(x, "- "))
	}
	return out
}

// section returns the items of a "## NAME" section of a body: bullet lines, or fenced blocks.
func section(body, name string) []string {
	_, rest, ok := strings.Cut(body, "\n## "+name+"\n")
	if !ok {
		return nil
	}
	if i := strings.Index(rest, "\n## "); i >= 0 {
		rest = rest[:i]
	}
	var out []string
	var block []string
	fence := false
	for line := range strings.Lines(rest) {
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "```"):
			block = append(block, line)
			if fence {
				out = append(out, strings.Join(block, "\n"))
				block = nil
			}
			fence = !fence
		case fence:
			block = append(block, line)
		case strings.HasPrefix(line, "- "):
			out = append(out, line)
		}
	}
	return out
}

func lang(kernel string) string {
	if kernel == "octave" {
		return "matlab"
	}
	return kernel
}

// describe is a skill's description: what it does, where, and how it was checked.
func describe(in *SkillInput) string {
	d := fmt.Sprintf("%s: %s (%s kernel). Checked by: %s", in.Title, strings.TrimSuffix(textcut.Head(in.Action, 400), "."), in.Kernel, textcut.Head(in.Checkpoint, 300))
	return textcut.Head(d, memory.MaxDescription-4)
}

var assignRe = regexp.MustCompile(`(?m)(?:^|[\s,(;])([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*(-?[0-9][0-9.eE+\-]*|'[^']*'|"[^"]*"|True|False|true|false)\s*(?:[;,)#%]|$)`)

// Settings are the parameter settings a cell makes: "name = value" for every assignment of a
// number, a string or a boolean (keyword arguments too), in order, the last one of a name kept.
func Settings(code string) []string {
	var names []string
	vals := map[string]string{}
	for _, m := range assignRe.FindAllStringSubmatch(code, -1) {
		name, v := m[1], m[2]
		if _, ok := vals[name]; !ok {
			names = append(names, name)
		}
		vals[name] = v
	}
	var out []string
	for _, n := range names {
		out = append(out, n+" = "+vals[n])
	}
	return out
}

// skillBody is a skill's Markdown: when it applies, the procedure, its parameters, how it is
// validated, its failure modes, the variants that also passed and the evidence.
func skillBody(in *SkillInput, variants, evidence, failures []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s\n\n## When it applies\n\n", in.Title, strings.TrimSpace(in.Action))
	fmt.Fprintf(&b, "- Task: %s\n- Kernel: %s\n", textcut.Head(strings.Join(strings.Fields(in.Task), " "), 300), in.Kernel)
	ms, _ := statement.Extract(in.Task + ". " + in.Action)
	var names []string
	for _, m := range ms {
		if m.Kind != memory.EntityName {
			names = append(names, m.Name)
		}
	}
	if len(names) > 0 {
		fmt.Fprintf(&b, "- About: %s\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "\n## Procedure\n\n```%s\n%s\n```\n", lang(in.Kernel), strings.TrimRight(in.Code, "\n"))
	if set := Settings(in.Code); len(set) > 0 {
		b.WriteString("\n## Parameters\n\n")
		for _, x := range set {
			fmt.Fprintf(&b, "- %s\n", x)
		}
	}
	fmt.Fprintf(&b, "\n## Validation checks\n\n- %s\n", strings.TrimSpace(in.Checkpoint))
	if in.Summary != "" {
		fmt.Fprintf(&b, "- Established: %s\n", strings.TrimSpace(in.Summary))
	}
	if len(failures) > 0 {
		b.WriteString("\n## Failure modes (guardrails)\n\n")
		for _, f := range failures {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if len(variants) > 0 {
		b.WriteString("\n## Variants that also passed\n\n")
		for _, v := range variants {
			fmt.Fprintf(&b, "%s\n", v)
		}
	}
	b.WriteString("\n## Evidence\n\n")
	for _, e := range evidence {
		fmt.Fprintf(&b, "- %s\n", e)
	}
	return b.String()
}

// slug turns words into an Agent Skills name: lowercase letters, digits and single hyphens.
func slug(s string, limit int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
	}
	name := strings.Trim(b.String(), "-")
	for len(name) > limit {
		i := strings.LastIndexByte(name[:limit], '-')
		if i <= 0 {
			name = name[:limit]
			break
		}
		name = name[:i]
	}
	return strings.Trim(name, "-")
}

// uniqueName is a descriptive name no skill of the namespace has: the step's title, then the
// method, software and material it is about, the kernel, then a number.
func uniqueName(ctx context.Context, s memory.Reader, in *SkillInput) (string, error) {
	words := []string{in.Title}
	ms, _ := statement.Extract(in.Action + ". " + in.Task)
	title := statement.Words(in.Title)
	for _, m := range ms {
		if m.Kind == memory.EntityName || strings.Contains(title, statement.Words(m.Name)) {
			continue
		}
		if m.Kind == memory.EntityMethod || m.Kind == memory.EntitySoftware || m.Kind == memory.EntityMaterial {
			words = append(words, m.Name)
		}
	}
	words = append(words, in.Kernel)
	var tries []string
	for i := 1; i <= len(words); i++ {
		if n := slug(strings.Join(words[:i], " "), memory.MaxSkillName); n != "" && !slices.Contains(tries, n) {
			tries = append(tries, n)
		}
	}
	if len(tries) == 0 {
		tries = []string{"procedure"}
	}
	// The title alone only when it says enough (two words or more).
	if len(tries) > 1 && !strings.Contains(tries[0], "-") {
		tries = tries[1:]
	}
	for _, n := range tries {
		taken, err := exists(ctx, s, in.Namespace, n)
		if err != nil {
			return "", err
		}
		if !taken {
			return n, nil
		}
	}
	base := slug(tries[len(tries)-1], memory.MaxSkillName-4)
	for i := 2; ; i++ {
		n := fmt.Sprintf("%s-%d", base, i)
		taken, err := exists(ctx, s, in.Namespace, n)
		if err != nil {
			return "", err
		}
		if !taken {
			return n, nil
		}
	}
}

func exists(ctx context.Context, s memory.Reader, ns, name string) (bool, error) {
	_, err := s.Get(ctx, &memory.GetParams{Namespace: ns, Name: name})
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, memory.ErrNotFound):
		return false, nil
	}
	return false, err
}
