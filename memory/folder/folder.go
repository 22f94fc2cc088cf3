// Package folder exports memory to a folder a person can read, edit and keep in git, and
// imports it back:
//
//	facts/ID.md             one fact: YAML front matter (id, namespace, kind, status, tags, …)
//	                        then its text
//	skills/NAME/SKILL.md    one skill, an Agent Skills file (memory/skillmd); labmate's fields
//	                        under metadata; a skill of labmate's built-in library (namespace
//	                        builtin/skills) with its scripts/, as labmate ships them
//	graph.yaml              the entities and relations the entries do not imply (added by a
//	                        model or a person, or invalidated); the others are extracted again
//	                        from the entries on import
//
// Export writes every entry in every status (invalidated and superseded ones too), so nothing is
// lost in transfer; export → import → export gives the same bytes. Import checks every file
// before it writes anything and then writes them all in one transaction: all or nothing. Errors
// name the file, the line and the problem. The history is not exported.
package folder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/labmate/labmate/examples/skills"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/skillmd"
)

// Folder and file names inside an export.
const (
	FactsDir  = "facts"
	SkillsDir = "skills"
	GraphFile = "graph.yaml"
)

// graphDoc is graph.yaml.
type graphDoc struct {
	Entities  []entityFront   `yaml:"entities,omitempty"`
	Relations []relationFront `yaml:"relations,omitempty"`
}

type entityFront struct {
	ID        string   `yaml:"id"`
	Name      string   `yaml:"name"`
	Kind      string   `yaml:"kind"`
	Aliases   []string `yaml:"aliases,omitempty,flow"`
	Status    string   `yaml:"status"`
	Reason    string   `yaml:"reason,omitempty"`
	Source    string   `yaml:"source,omitempty"`
	ValidFrom string   `yaml:"valid_from,omitempty"`
	InvalidAt string   `yaml:"invalid_at,omitempty"`
	CreatedAt string   `yaml:"created_at"`
	UpdatedAt string   `yaml:"updated_at"`
}

type relationFront struct {
	From      string `yaml:"from"`
	Rel       string `yaml:"rel"`
	To        string `yaml:"to"`
	Source    string `yaml:"source,omitempty"`
	ValidFrom string `yaml:"valid_from"`
	InvalidAt string `yaml:"invalid_at,omitempty"`
}

// EncodeGraph writes graph.yaml (nil when there is nothing to write).
func EncodeGraph(ents []*memory.Entity, rels []memory.Relation) ([]byte, error) {
	if len(ents) == 0 && len(rels) == 0 {
		return nil, nil
	}
	var doc graphDoc
	for _, e := range ents {
		doc.Entities = append(doc.Entities, entityFront{ID: e.ID, Name: e.Name, Kind: string(e.Kind), Aliases: e.Aliases, Status: string(e.Status),
			Reason: e.Reason, Source: e.Source, ValidFrom: ts(e.ValidFrom), InvalidAt: ts(e.InvalidAt), CreatedAt: ts(e.CreatedAt), UpdatedAt: ts(e.UpdatedAt)})
	}
	for _, r := range rels {
		doc.Relations = append(doc.Relations, relationFront{From: r.From, Rel: r.Rel, To: r.To, Source: r.Source, ValidFrom: ts(r.ValidFrom), InvalidAt: ts(r.InvalidAt)})
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	enc.Close()
	return buf.Bytes(), nil
}

// ParseGraph reads graph.yaml.
func ParseGraph(path string, data []byte) ([]*memory.Entity, []memory.Relation, error) {
	var doc graphDoc
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil {
		line, msg := 1, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
			line, _ = strconv.Atoi(msg[m[2]:m[3]])
			msg = msg[:m[0]] + msg[m[1]:]
		}
		return nil, nil, &FileError{File: path, Line: line, Msg: msg}
	}
	when := func(what, s string) (time.Time, error) {
		if s == "" {
			return time.Time{}, nil
		}
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return v, &FileError{File: path, Msg: fmt.Sprintf("%s: %q is not an RFC 3339 time", what, s)}
		}
		return v, nil
	}
	var ents []*memory.Entity
	for _, f := range doc.Entities {
		e := &memory.Entity{ID: f.ID, Name: f.Name, Kind: memory.EntityKind(f.Kind), Aliases: f.Aliases, Status: memory.Status(f.Status), Reason: f.Reason, Source: f.Source}
		var err error
		for _, t := range []struct {
			s   string
			dst *time.Time
		}{{f.ValidFrom, &e.ValidFrom}, {f.InvalidAt, &e.InvalidAt}, {f.CreatedAt, &e.CreatedAt}, {f.UpdatedAt, &e.UpdatedAt}} {
			if *t.dst, err = when("entity "+f.ID, t.s); err != nil {
				return nil, nil, err
			}
		}
		if err := e.Validate(); err != nil {
			return nil, nil, &FileError{File: path, Msg: err.Error()}
		}
		ents = append(ents, e)
	}
	var rels []memory.Relation
	for _, f := range doc.Relations {
		r := memory.Relation{From: f.From, Rel: f.Rel, To: f.To, Source: f.Source}
		var err error
		if r.ValidFrom, err = when("relation "+f.From, f.ValidFrom); err != nil {
			return nil, nil, err
		}
		if r.InvalidAt, err = when("relation "+f.From, f.InvalidAt); err != nil {
			return nil, nil, err
		}
		rels = append(rels, r)
	}
	return ents, rels, nil
}

// factFront is a fact's front matter, in the order it is written.
type factFront struct {
	ID           string     `yaml:"id"`
	Namespace    string     `yaml:"namespace"`
	Kind         string     `yaml:"kind"`
	Status       string     `yaml:"status"`
	Tags         []string   `yaml:"tags,omitempty,flow"`
	Evidence     []string   `yaml:"evidence,omitempty"`
	Tried        []string   `yaml:"tried,omitempty"`
	Worked       []string   `yaml:"worked,omitempty"`
	Confidence   float64    `yaml:"confidence,omitempty"`
	Successes    int        `yaml:"successes,omitempty"`
	Failures     int        `yaml:"failures,omitempty"`
	Reason       string     `yaml:"reason,omitempty"`
	SupersededBy string     `yaml:"superseded_by,omitempty"`
	ValidFrom    string     `yaml:"valid_from,omitempty"`
	InvalidAt    string     `yaml:"invalid_at,omitempty"`
	CreatedAt    string     `yaml:"created_at"`
	UpdatedAt    string     `yaml:"updated_at"`
	Provenance   *provFront `yaml:"provenance,omitempty"`
}

type provFront struct {
	Operations []string    `yaml:"operations,omitempty,flow"`
	Session    string      `yaml:"session,omitempty"`
	Model      string      `yaml:"model,omitempty"`
	Source     string      `yaml:"source,omitempty"`
	Time       string      `yaml:"time,omitempty"`
	Merged     []provFront `yaml:"merged,omitempty"`
}

var factKeys = []string{"id", "namespace", "kind", "status", "tags", "evidence", "tried", "worked", "confidence", "successes", "failures",
	"reason", "superseded_by", "valid_from", "invalid_at", "created_at", "updated_at", "provenance"}

func provToFront(p memory.Provenance) *provFront {
	if p.IsZero() {
		return nil
	}
	f := &provFront{Operations: p.Operations, Session: p.Session, Model: p.Model, Source: p.Source, Time: ts(p.Time)}
	for _, m := range p.Merged {
		if x := provToFront(m); x != nil {
			f.Merged = append(f.Merged, *x)
		}
	}
	return f
}

func provFromFront(f *provFront) (memory.Provenance, error) {
	p := memory.Provenance{Operations: f.Operations, Session: f.Session, Model: f.Model, Source: f.Source}
	if f.Time != "" {
		v, err := time.Parse(time.RFC3339Nano, f.Time)
		if err != nil {
			return p, fmt.Errorf("provenance time %q is not an RFC 3339 time", f.Time)
		}
		p.Time = v
	}
	for i := range f.Merged {
		m, err := provFromFront(&f.Merged[i])
		if err != nil {
			return p, err
		}
		p.Merged = append(p.Merged, m)
	}
	return p, nil
}

func ts(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// EncodeFact writes a fact file: front matter, then the text and a newline.
func EncodeFact(f *memory.Fact) ([]byte, error) {
	fr := factFront{ID: f.ID, Namespace: f.Namespace, Kind: string(f.Kind), Status: string(f.Status), Tags: f.Tags,
		Evidence: f.Evidence, Tried: f.Tried, Worked: f.Worked, Confidence: f.Confidence, Successes: f.Successes, Failures: f.Failures, Reason: f.Reason,
		SupersededBy: f.SupersededBy, ValidFrom: ts(f.ValidFrom), InvalidAt: ts(f.InvalidAt), CreatedAt: ts(f.CreatedAt), UpdatedAt: ts(f.UpdatedAt)}
	fr.Provenance = provToFront(f.Provenance)
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&fr); err != nil {
		return nil, fmt.Errorf("fact %s: %w", f.ID, err)
	}
	enc.Close()
	buf.WriteString("---\n")
	buf.WriteString(f.Text)
	buf.WriteString("\n")
	return buf.Bytes(), nil
}

// FileError is a problem in one file of an import.
type FileError struct {
	File string
	Line int
	Msg  string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Unwrap makes errors.Is(err, memory.ErrInvalid) true.
func (e *FileError) Unwrap() error { return memory.ErrInvalid }

var yamlLine = regexp.MustCompile(`line (\d+): `)

// ParseFact reads a fact file written by EncodeFact (or by hand, in the same shape).
func ParseFact(path string, data []byte) (*memory.Fact, error) {
	bad := func(line int, format string, args ...any) error {
		return &FileError{File: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, bad(1, "no front matter: a fact file starts with a line \"---\"")
	}
	end := strings.Index(rest, "\n---\n")
	if end < 0 {
		return nil, bad(1, "front matter is not closed by a line \"---\"")
	}
	front, body := rest[:end+1], rest[end+5:]
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 1
		if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
			line, _ = strconv.Atoi(msg[m[2]:m[3]])
			msg = msg[:m[0]] + msg[m[1]:]
		}
		return nil, bad(line+1, "broken YAML: %s", msg)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, bad(2, "front matter must be a mapping with id, namespace, kind, status, created_at, updated_at")
	}
	root := doc.Content[0]
	lines := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k := root.Content[i]
		if !slices.Contains(factKeys, k.Value) {
			return nil, bad(k.Line+1, "key %q is not allowed: only %s", k.Value, strings.Join(factKeys, ", "))
		}
		if _, dup := lines[k.Value]; dup {
			return nil, bad(k.Line+1, "key %q repeated", k.Value)
		}
		lines[k.Value] = k.Line + 1
	}
	var fr factFront
	if err := root.Decode(&fr); err != nil {
		line, msg := 2, err.Error()
		if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
			line, _ = strconv.Atoi(msg[m[2]:m[3]])
			line++
		}
		return nil, bad(line, "%s", strings.TrimPrefix(msg, "yaml: "))
	}
	line := func(key string) int {
		if l, ok := lines[key]; ok {
			return l
		}
		return 2
	}
	for _, k := range []string{"id", "namespace", "kind", "status", "created_at", "updated_at"} {
		if _, ok := lines[k]; !ok {
			return nil, bad(2, "%s is required", k)
		}
	}
	f := &memory.Fact{ID: fr.ID, Namespace: fr.Namespace, Kind: memory.Kind(fr.Kind), Status: memory.Status(fr.Status), Tags: fr.Tags,
		Evidence: fr.Evidence, Tried: fr.Tried, Worked: fr.Worked, Confidence: fr.Confidence, Successes: fr.Successes, Failures: fr.Failures, Reason: fr.Reason,
		SupersededBy: fr.SupersededBy, Text: strings.TrimSuffix(body, "\n")}
	for _, t := range []struct {
		key string
		s   string
		dst *time.Time
	}{{"valid_from", fr.ValidFrom, &f.ValidFrom}, {"invalid_at", fr.InvalidAt, &f.InvalidAt}, {"created_at", fr.CreatedAt, &f.CreatedAt}, {"updated_at", fr.UpdatedAt, &f.UpdatedAt}} {
		if t.s == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339Nano, t.s)
		if err != nil {
			return nil, bad(line(t.key), "%s %q is not an RFC 3339 time", t.key, t.s)
		}
		*t.dst = v
	}
	if p := fr.Provenance; p != nil {
		prov, err := provFromFront(p)
		if err != nil {
			return nil, bad(line("provenance"), "%v", err)
		}
		f.Provenance = prov
	}
	if want := f.ID + ".md"; filepath.Base(path) != want && filepath.Base(path) != "" {
		return nil, bad(line("id"), "id %q does not match the file name (want %s)", f.ID, want)
	}
	if f.Status != memory.StatusActive && f.Status != memory.StatusInvalidated && f.Status != memory.StatusSuperseded {
		return nil, bad(line("status"), "status %q: want active, invalidated or superseded", f.Status)
	}
	if err := f.Validate(); err != nil {
		key := "text"
		switch {
		case errors.Is(err, memory.ErrInvalid) && strings.Contains(err.Error(), "namespace"):
			key = "namespace"
		case strings.Contains(err.Error(), "kind"):
			key = "kind"
		case strings.Contains(err.Error(), "confidence"):
			key = "confidence"
		}
		l := line(key)
		if key == "text" {
			l = strings.Count(front, "\n") + 3
		}
		return nil, bad(l, "%s", strings.TrimPrefix(err.Error(), memory.ErrInvalid.Error()+": "))
	}
	return f, nil
}

// ExportOptions select what Export writes; nil exports everything.
type ExportOptions struct {
	Namespaces []string // a namespace includes its children
}

// Result counts the entries exported or imported.
type Result struct {
	Facts  int `json:"facts"`
	Skills int `json:"skills"`
}

// Export writes the store's entries (every status) under dir/facts and dir/skills, replacing
// those two folders; other files in dir are left alone.
func Export(ctx context.Context, s memory.Store, dir string, opts *ExportOptions) (*Result, error) {
	if opts == nil {
		opts = &ExportOptions{}
	}
	files := map[string][]byte{}
	res := &Result{}
	skillNS := map[string]string{}
	q := &memory.Query{Namespaces: opts.Namespaces, Status: []memory.Status{memory.StatusActive, memory.StatusInvalidated, memory.StatusSuperseded}}
	for r, err := range s.Search(ctx, q) {
		if err != nil {
			return nil, err
		}
		if sk := r.Skill; sk != nil {
			if ns, dup := skillNS[sk.Name]; dup {
				return nil, fmt.Errorf("%w: export: skill %q is in both %s and %s; export one namespace at a time", memory.ErrConflict, sk.Name, ns, sk.Namespace)
			}
			skillNS[sk.Name] = sk.Namespace
			b, err := skillmd.Encode(sk)
			if err != nil {
				return nil, err
			}
			files[filepath.Join(SkillsDir, sk.Name, skillmd.FileName)] = b
			if sk.Namespace == skills.Namespace { // a shipped skill: its scripts too, as labmate ships them
				if err := shippedScripts(sk.Name, files); err != nil {
					return nil, err
				}
			}
			res.Skills++
			continue
		}
		b, err := EncodeFact(r.Fact)
		if err != nil {
			return nil, err
		}
		files[filepath.Join(FactsDir, r.Fact.ID+".md")] = b
		res.Facts++
	}
	graphDir := ""
	if g, ok := s.(memory.Graph); ok && len(opts.Namespaces) == 0 {
		ents, rels, err := g.GraphExport(ctx)
		if err != nil {
			return nil, err
		}
		b, err := EncodeGraph(ents, rels)
		if err != nil {
			return nil, err
		}
		if b != nil {
			files[GraphFile] = b
		}
		graphDir = GraphFile
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, ".export-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{FactsDir, SkillsDir} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o755); err != nil {
			return nil, err
		}
	}
	for name, b := range files {
		path := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{FactsDir, SkillsDir} {
		if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
			return nil, err
		}
		if err := os.Rename(filepath.Join(tmp, d), filepath.Join(dir, d)); err != nil {
			return nil, err
		}
	}
	if graphDir != "" { // the whole store: its graph replaces the folder's
		if err := os.RemoveAll(filepath.Join(dir, GraphFile)); err != nil {
			return nil, err
		}
		if _, ok := files[GraphFile]; ok {
			if err := os.Rename(filepath.Join(tmp, GraphFile), filepath.Join(dir, GraphFile)); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// shippedScripts adds the scripts labmate ships with its built-in skill name to files.
func shippedScripts(name string, files map[string][]byte) error {
	return fs.WalkDir(skills.FS, name+"/scripts", func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(skills.FS, p)
		if err != nil {
			return err
		}
		files[filepath.Join(SkillsDir, filepath.FromSlash(p))] = b
		return nil
	})
}

// Read parses an exported folder, reporting every bad file (joined errors) instead of the
// entries.
func Read(dir string) ([]*memory.Fact, []*memory.Skill, error) {
	var facts []*memory.Fact
	var skills []*memory.Skill
	var errs []error
	if _, err := os.Stat(dir); err != nil {
		return nil, nil, fmt.Errorf("%w: import: %w", memory.ErrInvalid, err)
	}
	factFiles, err := os.ReadDir(filepath.Join(dir, FactsDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	for _, e := range factFiles {
		path := filepath.Join(dir, FactsDir, e.Name())
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".md") {
			errs = append(errs, &FileError{File: path, Msg: "not a fact file (facts/ holds only ID.md files)"})
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f, err := ParseFact(path, b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		facts = append(facts, f)
	}
	if _, err := os.Stat(filepath.Join(dir, SkillsDir)); err == nil {
		sks, err := skillmd.ReadDir(filepath.Join(dir, SkillsDir))
		if err != nil {
			errs = append(errs, err)
		}
		for _, sk := range sks {
			path := filepath.Join(dir, SkillsDir, sk.Name, skillmd.FileName)
			switch {
			case sk.ID == "":
				errs = append(errs, &FileError{File: path, Line: 1, Msg: "no metadata labmate-id: import reads what export wrote; use labmate memory sync for hand-written skills"})
			case sk.Namespace == "":
				errs = append(errs, &FileError{File: path, Line: 1, Msg: "no metadata labmate-namespace"})
			default:
				skills = append(skills, sk)
			}
		}
	}
	if len(facts) == 0 && len(skills) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%w: import: %s has no facts/*.md and no skills/*/SKILL.md", memory.ErrInvalid, dir))
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	return facts, skills, nil
}

// Import reads an exported folder and writes every entry verbatim in one transaction; one bad
// file and nothing is written.
func Import(ctx context.Context, s memory.Store, dir, actor string) (*Result, error) {
	facts, skills, err := Read(dir)
	if err != nil {
		return nil, err
	}
	var ents []*memory.Entity
	var rels []memory.Relation
	path := filepath.Join(dir, GraphFile)
	if b, err := os.ReadFile(path); err == nil {
		if ents, rels, err = ParseGraph(path, b); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	r, err := s.Import(ctx, &memory.ImportParams{Facts: facts, Skills: skills, Entities: ents, Relations: rels, Actor: actor})
	if err != nil {
		return nil, err
	}
	return &Result{Facts: r.Facts, Skills: r.Skills}, nil
}
