package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/labmate/labmate/memory"
)

// MemorySearchIn are the arguments of memory_search.
type MemorySearchIn struct {
	Query      string   `json:"query" jsonschema:"what to look for (full text; empty lists the newest facts)"`
	Namespaces []string `json:"namespaces,omitempty" jsonschema:"namespaces to search (a namespace includes its children); default all"`
	Kinds      []string `json:"kinds,omitempty" jsonschema:"fact kinds: observation, warning, boundary, parameter, reference; default all"`
	Tags       []string `json:"tags,omitempty" jsonschema:"every tag must be present"`
	Limit      int      `json:"limit,omitempty" jsonschema:"at most this many results (default 10)"`
}

// FactOut is a fact as a tool returns it.
type FactOut struct {
	ID         string   `json:"id"`
	Namespace  string   `json:"namespace"`
	Kind       string   `json:"kind"`
	Text       string   `json:"text"`
	Tags       []string `json:"tags,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
	Confidence float64  `json:"confidence,omitempty"`
	Status     string   `json:"status"`
	Operations []string `json:"operations,omitempty" jsonschema:"the protocol operations it was learned from"`
	Session    string   `json:"session,omitempty"`
	Score      float64  `json:"score,omitempty"`
	Updated    string   `json:"updated"`
}

// MemorySearchOut lists facts, best first.
type MemorySearchOut struct {
	Facts []FactOut `json:"facts"`
}

// AddFactIn are the arguments of memory_add_fact.
type AddFactIn struct {
	Text       string   `json:"text" jsonschema:"one atomic statement"`
	Kind       string   `json:"kind,omitempty" jsonschema:"observation (default), warning, boundary, parameter or reference"`
	Tags       []string `json:"tags,omitempty" jsonschema:"applicability: software, method, material class…"`
	Evidence   []string `json:"evidence,omitempty" jsonschema:"short quotes from the run that support it"`
	Confidence float64  `json:"confidence,omitempty" jsonschema:"0..1"`
	Namespace  string   `json:"namespace,omitempty" jsonschema:"where to store it (default: the server's fact namespace)"`
	Operations []string `json:"operations,omitempty" jsonschema:"exec operation ids it was learned from (default: this connection's last exec)"`
}

// AddFactOut is the stored fact.
type AddFactOut struct {
	Fact   FactOut `json:"fact"`
	Merged bool    `json:"merged" jsonschema:"an identical active fact existed: the two were merged"`
}

// SkillSearchIn are the arguments of skill_search.
type SkillSearchIn struct {
	Query      string   `json:"query" jsonschema:"what the procedure should do (full text; empty lists the newest skills)"`
	Namespaces []string `json:"namespaces,omitempty" jsonschema:"namespaces to search; default all"`
	Limit      int      `json:"limit,omitempty" jsonschema:"at most this many results (default 10)"`
}

// SkillOut is a skill as a tool returns it; Body only from skill_get.
type SkillOut struct {
	ID          string   `json:"id"`
	Namespace   string   `json:"namespace"`
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Body        string   `json:"body,omitempty" jsonschema:"the procedure (Markdown)"`
	Tags        []string `json:"tags,omitempty"`
	Version     int      `json:"version"`
	Uses        int      `json:"uses"`
	Successes   int      `json:"successes"`
	Failures    int      `json:"failures"`
	Status      string   `json:"status"`
	Operations  []string `json:"operations,omitempty"`
	Score       float64  `json:"score,omitempty"`
	Updated     string   `json:"updated"`
}

// SkillSearchOut lists skills, best first.
type SkillSearchOut struct {
	Skills []SkillOut `json:"skills"`
}

// SkillGetIn names a skill.
type SkillGetIn struct {
	Name      string `json:"name,omitempty" jsonschema:"the skill's name"`
	Namespace string `json:"namespace,omitempty" jsonschema:"its namespace (default: the server's skill namespace)"`
	ID        string `json:"id,omitempty" jsonschema:"or its id"`
}

// SkillSaveIn are the arguments of skill_save.
type SkillSaveIn struct {
	Name        string   `json:"name" jsonschema:"lowercase letters, digits and hyphens, at most 64 characters"`
	Description string   `json:"description" jsonschema:"what it does and when to use it, at most 1024 characters"`
	Body        string   `json:"body" jsonschema:"the procedure, verbatim (Markdown: steps, code, validation checks, failure modes)"`
	Tags        []string `json:"tags,omitempty"`
	Namespace   string   `json:"namespace,omitempty" jsonschema:"where to store it (default: the server's skill namespace)"`
	Operations  []string `json:"operations,omitempty" jsonschema:"exec operation ids it was validated by (default: this connection's last exec)"`
}

// SkillSaveOut is the stored skill.
type SkillSaveOut struct {
	Skill   SkillOut `json:"skill"`
	Created bool     `json:"created"`
	Changed bool     `json:"changed" jsonschema:"false: identical to the stored version, nothing written"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func factOut(f *memory.Fact, score float64) FactOut {
	return FactOut{ID: f.ID, Namespace: f.Namespace, Kind: string(f.Kind), Text: f.Text, Tags: f.Tags,
		Evidence: f.Evidence, Confidence: f.Confidence, Status: string(f.Status),
		Operations: f.Provenance.Operations, Session: f.Provenance.Session, Score: score, Updated: stamp(f.UpdatedAt)}
}

func skillOut(s *memory.Skill, score float64, body bool) SkillOut {
	o := SkillOut{ID: s.ID, Namespace: s.Namespace, Name: s.Name, Description: s.Description, Tags: s.Tags,
		Version: s.Version, Uses: s.Uses, Successes: s.Successes, Failures: s.Failures, Status: string(s.Status),
		Operations: s.Provenance.Operations, Score: score, Updated: stamp(s.UpdatedAt)}
	if body {
		o.Body = s.Body
	}
	return o
}

// actor names who writes: the MCP client, as it introduced itself.
func actor(req *sdk.CallToolRequest) string {
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil && p.ClientInfo.Name != "" {
			return "mcp:" + p.ClientInfo.Name
		}
	}
	return "mcp"
}

func kinds(names []string) ([]memory.Kind, error) {
	var ks []memory.Kind
	for _, n := range names {
		k := memory.Kind(n)
		ok := false
		for _, fk := range memory.FactKinds {
			ok = ok || fk == k
		}
		if !ok {
			return nil, fmt.Errorf("kinds: %q is not a fact kind (want one of %v)", n, memory.FactKinds)
		}
		ks = append(ks, k)
	}
	if ks == nil {
		ks = memory.FactKinds
	}
	return ks, nil
}

func (l *Lab) addMemoryTools() {
	m := l.opts.Memory
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "memory_search", Title: "Search facts",
		Description: "Search labmate's memory for facts (observations, warnings, failure boundaries, parameter choices, reference values) " +
			"relevant to a task. Treat them as cautions and references, not as answers to copy.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, in MemorySearchIn) (*sdk.CallToolResult, MemorySearchOut, error) {
			out := MemorySearchOut{Facts: []FactOut{}}
			ks, err := kinds(in.Kinds)
			if err != nil {
				return nil, out, err
			}
			for r, err := range m.Search(ctx, &memory.Query{Text: in.Query, Namespaces: in.Namespaces, Kinds: ks, Tags: in.Tags, Limit: limit(in.Limit)}) {
				if err != nil {
					return nil, out, err
				}
				if r.Fact != nil {
					out.Facts = append(out.Facts, factOut(r.Fact, r.Score))
				}
			}
			return nil, out, nil
		})
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "memory_add_fact", Title: "Remember a fact",
		Description: "Store one atomic fact learned from a run (verbatim; an identical active fact is merged instead). " +
			"It is linked to the operations it came from, so a person can trace it."},
		func(ctx context.Context, req *sdk.CallToolRequest, in AddFactIn) (*sdk.CallToolResult, AddFactOut, error) {
			ns := in.Namespace
			if ns == "" {
				ns = l.opts.FactNamespace
			}
			session := l.session(req.Session, "")
			ops := in.Operations
			if len(ops) == 0 {
				ops = l.lastOps(req.Session)
			}
			f := &memory.Fact{Namespace: ns, Text: in.Text, Kind: memory.Kind(in.Kind), Tags: in.Tags, Evidence: in.Evidence,
				Confidence: in.Confidence, Provenance: memory.Provenance{Operations: ops, Session: session, Time: time.Now()}}
			if f.Kind == "" {
				f.Kind = memory.KindObservation
			}
			r, err := m.AddFact(ctx, &memory.AddFactParams{Fact: f, Actor: actor(req), Reason: "added by an MCP client"})
			if err != nil {
				return nil, AddFactOut{}, err
			}
			return nil, AddFactOut{Fact: factOut(r.Fact, 0), Merged: r.Merged}, nil
		})
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "skill_search", Title: "Search skills",
		Description: "Search labmate's memory for skills: verbatim procedures (steps, code, validation checks) that worked before. " +
			"Fetch one with skill_get.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, in SkillSearchIn) (*sdk.CallToolResult, SkillSearchOut, error) {
			out := SkillSearchOut{Skills: []SkillOut{}}
			for r, err := range m.Search(ctx, &memory.Query{Text: in.Query, Namespaces: in.Namespaces, Kinds: []memory.Kind{memory.KindSkill}, Limit: limit(in.Limit)}) {
				if err != nil {
					return nil, out, err
				}
				if r.Skill != nil {
					out.Skills = append(out.Skills, skillOut(r.Skill, r.Score, false))
				}
			}
			return nil, out, nil
		})
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "skill_get", Title: "Get a skill",
		Description: "Fetch one skill with its whole procedure, by name (and namespace) or id.",
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *sdk.CallToolRequest, in SkillGetIn) (*sdk.CallToolResult, SkillOut, error) {
			p := &memory.GetParams{ID: in.ID}
			if in.ID == "" {
				if in.Name == "" {
					return nil, SkillOut{}, errors.New("skill_get: give the skill's name (and namespace) or its id")
				}
				p.Namespace, p.Name = in.Namespace, in.Name
				if p.Namespace == "" {
					p.Namespace = l.opts.SkillNamespace
				}
			}
			e, err := m.Get(ctx, p)
			if err != nil {
				return nil, SkillOut{}, err
			}
			if e.Skill == nil {
				return nil, SkillOut{}, fmt.Errorf("skill_get: %s is a fact, not a skill", in.ID)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: skillText(e.Skill)}}}, skillOut(e.Skill, 0, true), nil
		})
	sdk.AddTool(l.mcp, &sdk.Tool{Name: "skill_save", Title: "Save a skill",
		Description: "Save a procedure verbatim as a skill (an Agent Skills SKILL.md): created as version 1, " +
			"or a new version when its content changed. Save only procedures a run has validated."},
		func(ctx context.Context, req *sdk.CallToolRequest, in SkillSaveIn) (*sdk.CallToolResult, SkillSaveOut, error) {
			ns := in.Namespace
			if ns == "" {
				ns = l.opts.SkillNamespace
			}
			ops := in.Operations
			if len(ops) == 0 {
				ops = l.lastOps(req.Session)
			}
			s := &memory.Skill{Namespace: ns, Name: in.Name, Description: in.Description, Body: in.Body, Tags: in.Tags,
				Provenance: memory.Provenance{Operations: ops, Session: l.session(req.Session, ""), Time: time.Now()}}
			if err := s.Validate(); err != nil {
				return nil, SkillSaveOut{}, err
			}
			r, err := m.PutSkill(ctx, &memory.PutSkillParams{Skill: s, Actor: actor(req), Reason: "saved by an MCP client"})
			if err != nil {
				return nil, SkillSaveOut{}, err
			}
			return nil, SkillSaveOut{Skill: skillOut(r.Skill, 0, false), Created: r.Created, Changed: r.Changed}, nil
		})
}

func limit(n int) int {
	if n <= 0 {
		return 10
	}
	return min(n, 100)
}

// skillText is a skill as a model reads it.
func skillText(s *memory.Skill) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s (%s, version %d, %d uses: %d succeeded, %d failed)\n\n%s\n\n%s",
		s.Name, s.Namespace, s.Version, s.Uses, s.Successes, s.Failures, s.Description, s.Body)
	return b.String()
}
