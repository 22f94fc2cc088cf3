// Package skillmd reads and writes Agent Skills SKILL.md files (https://agentskills.io) and
// synchronises a folder of them into a memory namespace.
//
// A SKILL.md is YAML front matter between two "---" lines, then a Markdown body. The front
// matter may hold only name (1–64 lowercase letters, digits and single hyphens, equal to the
// folder's name), description (1–1024 characters), license, compatibility (≤ 500 characters),
// metadata (a map of strings to strings) and allowed-tools (a space-separated string).
// labmate's own fields — id, namespace, version, counts, status, times, tags, provenance — go
// under metadata with the "labmate-" prefix, so the file stays valid for every tool that reads
// the format. Every error names the file, the line and the rule broken.
package skillmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/labmate/labmate/memory"
)

// FileName is the name of a skill's file inside its folder.
const FileName = "SKILL.md"

// Allowed front matter keys, in the order Encode writes them.
var allowedKeys = []string{"name", "description", "license", "compatibility", "metadata", "allowed-tools"}

// Metadata keys labmate writes.
const (
	keyID         = "labmate-id"
	keyNamespace  = "labmate-namespace"
	keyVersion    = "labmate-version"
	keyUses       = "labmate-uses"
	keySuccesses  = "labmate-successes"
	keyFailures   = "labmate-failures"
	keyStatus     = "labmate-status"
	keyReason     = "labmate-reason"
	keyCreated    = "labmate-created"
	keyUpdated    = "labmate-updated"
	keyTags       = "labmate-tags"
	keyProvenance = "labmate-provenance"
)

// Error is a problem in a SKILL.md: it prints as FILE:LINE: MESSAGE and wraps
// memory.ErrBadSkill.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// Unwrap makes errors.Is(err, memory.ErrBadSkill) true.
func (e *Error) Unwrap() error { return memory.ErrBadSkill }

// Parse decodes the SKILL.md at path (used in errors and, when its base name is SKILL.md, for
// the folder-name rule) from data. The skill's namespace, id, counts and times come from the
// labmate- metadata when present; other metadata is kept in Skill.Metadata.
func Parse(path string, data []byte) (*memory.Skill, error) {
	bad := func(line int, format string, args ...any) error {
		return &Error{File: path, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(data) {
		return nil, bad(1, "not UTF-8 text")
	}
	text := string(data)
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		rest, ok = strings.CutPrefix(text, "---\r\n")
	}
	if !ok {
		return nil, bad(1, "no front matter: a SKILL.md starts with a line \"---\", then YAML with name and description, then \"---\"")
	}
	front, body, ok := cutFence(rest)
	if !ok {
		return nil, bad(1, "front matter is not closed by a line \"---\"")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(front), &doc); err != nil {
		line, msg := yamlErrorLine(err)
		return nil, bad(line+1, "broken YAML: %s", msg)
	}
	if len(doc.Content) == 0 {
		return nil, bad(2, "front matter is empty: name and description are required")
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, bad(root.Line+1, "front matter must be a mapping of keys to values")
	}
	sk := &memory.Skill{Body: body}
	seen := map[string]int{}
	var nameLine int
	var meta map[string]string
	metaLines := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		line := k.Line + 1
		key := k.Value
		if prev, dup := seen[key]; dup {
			return nil, bad(line, "key %q repeated (first on line %d)", key, prev)
		}
		seen[key] = line
		if !slices.Contains(allowedKeys, key) {
			return nil, bad(line, "key %q is not allowed: only %s (put other fields under metadata)", key, strings.Join(allowedKeys, ", "))
		}
		if key == "metadata" {
			if v.Kind != yaml.MappingNode {
				return nil, bad(line, "metadata must be a map of strings to strings")
			}
			meta = map[string]string{}
			for j := 0; j+1 < len(v.Content); j += 2 {
				mk, mv := v.Content[j], v.Content[j+1]
				if mk.Kind != yaml.ScalarNode || mv.Kind != yaml.ScalarNode {
					return nil, bad(mk.Line+1, "metadata %q: values must be strings, not lists or maps", mk.Value)
				}
				if _, dup := meta[mk.Value]; dup {
					return nil, bad(mk.Line+1, "metadata key %q repeated", mk.Value)
				}
				meta[mk.Value] = mv.Value
				metaLines[mk.Value] = mk.Line + 1
			}
			continue
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
			return nil, bad(line, "%s must be a string", key)
		}
		switch key {
		case "name":
			sk.Name, nameLine = v.Value, line
		case "description":
			sk.Description = v.Value
		case "license":
			sk.License = v.Value
		case "compatibility":
			sk.Compatibility = v.Value
		case "allowed-tools":
			sk.AllowedTools = v.Value
		}
	}
	if _, ok := seen["name"]; !ok {
		return nil, bad(2, "name is required")
	}
	if err := memory.ValidSkillName(sk.Name); err != nil {
		return nil, bad(nameLine, "%s", ruleOf(err))
	}
	if filepath.Base(path) == FileName {
		if dir := filepath.Base(filepath.Dir(path)); dir != sk.Name {
			return nil, bad(nameLine, "name %q must equal the skill's folder name %q", sk.Name, dir)
		}
	}
	if line, ok := seen["description"]; !ok || strings.TrimSpace(sk.Description) == "" {
		if !ok {
			line = 2
		}
		return nil, bad(line, "description is required (what the skill does and when to use it)")
	}
	if n := utf8.RuneCountInString(sk.Description); n > memory.MaxDescription {
		return nil, bad(seen["description"], "description is %d characters; at most %d", n, memory.MaxDescription)
	}
	if n := utf8.RuneCountInString(sk.Compatibility); n > memory.MaxCompatibility {
		return nil, bad(seen["compatibility"], "compatibility is %d characters; at most %d", n, memory.MaxCompatibility)
	}
	if err := fromMeta(sk, meta); err != nil {
		key := err.key
		return nil, bad(metaLines[key], "metadata %s: %v", key, err.err)
	}
	return sk, nil
}

type metaError struct {
	key string
	err error
}

// fromMeta moves labmate's metadata into the skill's fields.
func fromMeta(sk *memory.Skill, meta map[string]string) *metaError {
	other := map[string]string{}
	for k, v := range meta {
		var err error
		switch k {
		case keyID:
			sk.ID = v
		case keyNamespace:
			sk.Namespace = v
			err = memory.ValidNamespace(v)
		case keyVersion:
			sk.Version, err = strconv.Atoi(v)
		case keyUses:
			sk.Uses, err = strconv.Atoi(v)
		case keySuccesses:
			sk.Successes, err = strconv.Atoi(v)
		case keyFailures:
			sk.Failures, err = strconv.Atoi(v)
		case keyStatus:
			sk.Status = memory.Status(v)
			if v != string(memory.StatusActive) && v != string(memory.StatusInvalidated) && v != string(memory.StatusSuperseded) {
				err = fmt.Errorf("%q is not active, invalidated or superseded", v)
			}
		case keyReason:
			sk.Reason = v
		case keyCreated:
			sk.CreatedAt, err = time.Parse(time.RFC3339Nano, v)
		case keyUpdated:
			sk.UpdatedAt, err = time.Parse(time.RFC3339Nano, v)
		case keyTags:
			sk.Tags = strings.Fields(v)
		case keyProvenance:
			err = json.Unmarshal([]byte(v), &sk.Provenance)
		default:
			if strings.HasPrefix(k, "labmate-") {
				err = errors.New("not a key labmate knows")
			} else {
				other[k] = v
			}
		}
		if err != nil {
			return &metaError{k, err}
		}
	}
	if len(other) > 0 {
		sk.Metadata = other
	}
	return nil
}

// ruleOf strips the sentinel prefix from a memory validation error.
func ruleOf(err error) string {
	return strings.TrimPrefix(err.Error(), memory.ErrBadSkill.Error()+": ")
}

// cutFence splits s at the first line that is exactly "---".
func cutFence(s string) (before, after string, ok bool) {
	pos := 0
	for pos <= len(s) {
		end := strings.IndexByte(s[pos:], '\n')
		line := s[pos:]
		next := len(s)
		if end >= 0 {
			line, next = s[pos:pos+end], pos+end+1
		}
		if strings.TrimSuffix(line, "\r") == "---" {
			return s[:pos], s[next:], true
		}
		if end < 0 {
			break
		}
		pos = next
	}
	return "", "", false
}

var yamlLine = regexp.MustCompile(`line (\d+): `)

// yamlErrorLine finds the line in a yaml.v3 error (1 when it names none).
func yamlErrorLine(err error) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		return n, msg[:m[0]] + msg[m[1]:]
	}
	return 1, msg
}

// Encode writes a skill as a SKILL.md: keys in a fixed order, metadata sorted, labmate's fields
// under metadata. Parse(Encode(s)) gives s back, and Encode is deterministic, so a skill
// survives any number of export/import round trips byte for byte.
func Encode(sk *memory.Skill) ([]byte, error) {
	if err := memory.ValidSkillName(sk.Name); err != nil {
		return nil, err
	}
	str := func(v string) *yaml.Node {
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v}
		if strings.Contains(v, "\n") {
			n.Style = yaml.DoubleQuotedStyle // literal blocks cannot keep every trailing-space layout
		}
		return n
	}
	root := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { root.Content = append(root.Content, str(k), v) }
	add("name", str(sk.Name))
	add("description", str(sk.Description))
	if sk.License != "" {
		add("license", str(sk.License))
	}
	if sk.Compatibility != "" {
		add("compatibility", str(sk.Compatibility))
	}
	meta := maps.Clone(sk.Metadata)
	if meta == nil {
		meta = map[string]string{}
	}
	for k := range meta {
		if strings.HasPrefix(k, "labmate-") {
			return nil, fmt.Errorf("%w: skill %s: metadata key %q is reserved for labmate", memory.ErrBadSkill, sk.Name, k)
		}
	}
	set := func(k, v string) {
		if v != "" {
			meta[k] = v
		}
	}
	set(keyID, sk.ID)
	set(keyNamespace, sk.Namespace)
	if sk.Version != 0 {
		set(keyVersion, strconv.Itoa(sk.Version))
	}
	set(keyUses, strconv.Itoa(sk.Uses))
	set(keySuccesses, strconv.Itoa(sk.Successes))
	set(keyFailures, strconv.Itoa(sk.Failures))
	set(keyStatus, string(sk.Status))
	set(keyReason, sk.Reason)
	if !sk.CreatedAt.IsZero() {
		set(keyCreated, sk.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	if !sk.UpdatedAt.IsZero() {
		set(keyUpdated, sk.UpdatedAt.UTC().Format(time.RFC3339Nano))
	}
	set(keyTags, strings.Join(sk.Tags, " "))
	if p, err := json.Marshal(sk.Provenance); err == nil && string(p) != "{}" {
		set(keyProvenance, string(p))
	}
	if len(meta) > 0 {
		m := &yaml.Node{Kind: yaml.MappingNode}
		for _, k := range slices.Sorted(maps.Keys(meta)) {
			m.Content = append(m.Content, str(k), str(meta[k]))
		}
		add("metadata", m)
	}
	if sk.AllowedTools != "" {
		add("allowed-tools", str(sk.AllowedTools))
	}
	var buf bytes.Buffer
	buf.WriteString("---\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("skill %s: %w", sk.Name, err)
	}
	enc.Close()
	buf.WriteString("---\n")
	buf.WriteString(sk.Body)
	return buf.Bytes(), nil
}

// ReadDir parses every DIR/NAME/SKILL.md. It reads them all before it returns, and returns
// every problem it found (joined), or the skills sorted by name.
func ReadDir(dir string) ([]*memory.Skill, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: reading skills from %s: %w", memory.ErrBadSkill, dir, err)
	}
	var skills []*memory.Skill
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name(), FileName)
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, &Error{File: path, Line: 0, Msg: "missing: every skill folder holds a SKILL.md"})
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		sk, err := Parse(path, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		skills = append(skills, sk)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return skills, nil
}

// SyncResult counts what Sync did.
type SyncResult struct {
	Created, Updated, Unchanged int
	Skills                      []*memory.Skill // as stored
}

// Sync stores every skill of DIR/NAME/SKILL.md in namespace (each one new, a new version, or
// unchanged), after checking them all: one bad file and nothing is written. Counts and
// versions are the store's; labmate metadata in hand-written files other than tags and
// provenance is ignored.
func Sync(ctx context.Context, s memory.Store, dir, namespace, actor string) (*SyncResult, error) {
	if err := memory.ValidNamespace(namespace); err != nil {
		return nil, err
	}
	skills, err := ReadDir(dir)
	if err != nil {
		return nil, err
	}
	res := &SyncResult{}
	for _, sk := range skills {
		in := &memory.Skill{Namespace: namespace, Name: sk.Name, Description: sk.Description, License: sk.License,
			Compatibility: sk.Compatibility, AllowedTools: sk.AllowedTools, Metadata: sk.Metadata, Body: sk.Body,
			Tags: sk.Tags, Provenance: sk.Provenance}
		if in.Provenance.Source == "" {
			in.Provenance.Source = filepath.Join(dir, sk.Name, FileName)
		}
		r, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: in, Actor: actor, Reason: "sync from " + dir})
		if err != nil {
			return res, err
		}
		switch {
		case r.Created:
			res.Created++
		case r.Changed:
			res.Updated++
		default:
			res.Unchanged++
		}
		res.Skills = append(res.Skills, r.Skill)
	}
	return res, nil
}

// Names lists the skills of a library held in fsys (folders NAME/SKILL.md), sorted.
func Names(fsys fs.FS) []string {
	var out []string
	matches, _ := fs.Glob(fsys, "*/"+FileName)
	for _, m := range matches {
		out = append(out, path.Dir(m))
	}
	return out
}

// CopyScripts writes the scripts of skill (NAME/scripts/… in fsys), executable, into dir,
// which must exist.
func CopyScripts(fsys fs.FS, skill, dir string) error {
	scripts, err := fs.Sub(fsys, skill+"/scripts")
	if err != nil {
		return err
	}
	return fs.WalkDir(scripts, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(scripts, p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, filepath.Base(p)), b, 0o755)
	})
}
