// Package memory is labmate's durable memory: facts (boundary knowledge — observations,
// warnings, failure boundaries, reference values, parameter choices) and skills (procedures,
// stored verbatim as Agent Skills SKILL.md documents), provenance-linked, namespaced, searchable,
// and never silently lost.
//
// The Store interface is implemented by memory/sqlite (embedded default) and memory/postgres
// (shared); memory/memorytest is the suite both pass. Nothing is ever deleted: a fact that
// stops being true is invalidated (kept, with a reason), a duplicate is superseded by the entry
// it was merged into, and every change appends to a history (old text, new text, event, actor,
// time).
package memory

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind classifies an entry. Facts have one of the fact kinds; every skill has KindSkill.
type Kind string

// Kinds of entry.
const (
	KindObservation Kind = "observation" // something seen in a run
	KindWarning     Kind = "warning"     // something to avoid
	KindBoundary    Kind = "boundary"    // where a method or parameter stops working
	KindParameter   Kind = "parameter"   // a parameter choice that worked
	KindReference   Kind = "reference"   // a calibrated or reference value
	KindSkill       Kind = "skill"       // a procedure (Skill)
)

// FactKinds are the kinds a Fact may have.
var FactKinds = []Kind{KindObservation, KindWarning, KindBoundary, KindParameter, KindReference}

// Status is the life-cycle state of an entry.
type Status string

// Statuses. Only active entries are returned by a Query that names no status.
const (
	StatusActive      Status = "active"
	StatusSuperseded  Status = "superseded"  // merged into another entry (SupersededBy)
	StatusInvalidated Status = "invalidated" // no longer true; kept with a reason
)

// Provenance links an entry to what produced it.
type Provenance struct {
	Operations []string  `json:"operations,omitempty"` // protocol operation ids of the trace
	Session    string    `json:"session,omitempty"`    // protocol session id
	Model      string    `json:"model,omitempty"`      // the model that wrote it, if any
	Source     string    `json:"source,omitempty"`     // a URL or file it came from
	Time       time.Time `json:"time,omitzero"`        // when the evidence was observed
	// Merged is the provenance of the duplicates merged into the entry, oldest first: a merge
	// keeps where both came from.
	Merged []Provenance `json:"merged,omitempty"`
}

// IsZero reports whether p records nothing.
func (p *Provenance) IsZero() bool {
	return len(p.Operations) == 0 && p.Session == "" && p.Model == "" && p.Source == "" && p.Time.IsZero() && len(p.Merged) == 0
}

// Absorb records that a duplicate with provenance q was merged into the entry p describes: q's
// operations join p's, and q itself (and what had been merged into it) is kept in p.Merged,
// unless p already says the same.
func (p *Provenance) Absorb(q Provenance) {
	for _, op := range q.Operations {
		if !slices.Contains(p.Operations, op) {
			p.Operations = append(p.Operations, op)
		}
	}
	inner := q.Merged
	q.Merged = nil
	same := func(a, b Provenance) bool {
		return a.Session == b.Session && a.Model == b.Model && a.Source == b.Source && a.Time.Equal(b.Time) && slices.Equal(a.Operations, b.Operations)
	}
	for _, x := range append([]Provenance{q}, inner...) {
		if x.IsZero() {
			continue
		}
		self := *p
		self.Merged = nil
		if same(self, x) || slices.ContainsFunc(p.Merged, func(m Provenance) bool { return same(m, x) }) {
			continue
		}
		x.Operations = slices.Clone(x.Operations)
		p.Merged = append(p.Merged, x)
	}
}

// Fact is one atomic statement of boundary knowledge.
type Fact struct {
	ID        string   `json:"id"`
	Namespace string   `json:"namespace"`
	Text      string   `json:"text"`
	Kind      Kind     `json:"kind"`
	Tags      []string `json:"tags,omitempty"`     // applicability: material class, software, method…
	Evidence  []string `json:"evidence,omitempty"` // short quotes from the trace that support it
	// Tried and Worked are what a guardrail learned from a failure and its repair: the
	// parameter settings ("dt = 0.06") of the run that failed and of the one that fixed it. The
	// agent flags a cell that repeats a Tried setting.
	Tried        []string   `json:"tried,omitempty"`
	Worked       []string   `json:"worked,omitempty"`
	Provenance   Provenance `json:"provenance"`
	Confidence   float64    `json:"confidence"` // 0..1; 0 means unknown
	Successes    int        `json:"successes"`
	Failures     int        `json:"failures"`
	Status       Status     `json:"status"`
	Reason       string     `json:"reason,omitempty"`        // why it was invalidated or superseded
	SupersededBy string     `json:"superseded_by,omitempty"` // the entry it was merged into
	ValidFrom    time.Time  `json:"valid_from"`
	InvalidAt    time.Time  `json:"invalid_at,omitzero"`
	CreatedAt    time.Time  `json:"created_at"`
	UpdatedAt    time.Time  `json:"updated_at"`
}

// Skill is a procedure stored verbatim: the SKILL.md front matter fields and its Markdown body.
// labmate's own fields (namespace, provenance, version, counts) live here and are written under
// metadata by memory/skillmd.
type Skill struct {
	ID            string            `json:"id"`
	Namespace     string            `json:"namespace"`
	Name          string            `json:"name"`        // lowercase letters, digits, hyphens; ≤ 64
	Description   string            `json:"description"` // ≤ 1024 characters
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  string            `json:"allowed_tools,omitempty"` // space-separated, as in the spec
	Metadata      map[string]string `json:"metadata,omitempty"`      // other tools' metadata, kept verbatim
	Body          string            `json:"body"`                    // the Markdown after the front matter
	Tags          []string          `json:"tags,omitempty"`
	Provenance    Provenance        `json:"provenance"`
	Version       int               `json:"version"` // 1, then +1 whenever its content changes
	Uses          int               `json:"uses"`
	Successes     int               `json:"successes"`
	Failures      int               `json:"failures"`
	Status        Status            `json:"status"`
	Reason        string            `json:"reason,omitempty"`
	CreatedAt     time.Time         `json:"created_at"`
	UpdatedAt     time.Time         `json:"updated_at"`
}

// Result is one search hit: exactly one of Fact and Skill is set. Score is the fused score
// (higher is better); BM25 and Cosine are the per-method scores (0 when that method did not
// find it), Rank the 1-based position in the results.
type Result struct {
	Fact   *Fact   `json:"fact,omitempty"`
	Skill  *Skill  `json:"skill,omitempty"`
	Score  float64 `json:"score"`
	BM25   float64 `json:"bm25,omitempty"`   // full-text relevance, higher is better
	Cosine float64 `json:"cosine,omitempty"` // embedding similarity to the query
	Rank   int     `json:"rank"`
}

// ID is the id of the hit's entry.
func (r *Result) ID() string {
	if r.Skill != nil {
		return r.Skill.ID
	}
	return r.Fact.ID
}

// Query selects entries. Every filter that is set must hold. With Text empty, Search lists
// the matching entries, most recently updated first; otherwise the best matches first.
type Query struct {
	Text       string   `json:"text,omitempty"`
	Namespaces []string `json:"namespaces,omitempty"` // a namespace also matches its children: "user" matches "user/skills"
	Kinds      []Kind   `json:"kinds,omitempty"`      // KindSkill selects skills
	Tags       []string `json:"tags,omitempty"`       // every tag must be present
	Status     []Status `json:"status,omitempty"`     // empty: active only
	// Updated within [Since, Until); zero means unbounded.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// ValidAt selects facts valid at that time (valid_from ≤ t < invalid_at).
	ValidAt time.Time `json:"valid_at,omitzero"`
	Limit   int       `json:"limit,omitempty"` // 0: 10 for a text search, unlimited for a listing
}

// Event names a change in the history.
type Event string

// Events.
const (
	EventAdd        Event = "ADD"
	EventUpdate     Event = "UPDATE"
	EventMerge      Event = "MERGE"       // a duplicate was merged into this entry
	EventSupersede  Event = "SUPERSEDE"   // this entry was merged into another
	EventInvalidate Event = "DELETE"      // invalidated: kept, no longer active
	EventUse        Event = "USE"         // a recorded use and its outcome
	EventImport     Event = "IMPORT"      // written by Import
	EventFreeze     Event = "FREEZE"      // a namespace was frozen
	EventUnfreeze   Event = "UNFREEZE"    // a namespace was unfrozen
	EventRefused    Event = "REFUSED"     // a change a model asked for and memory refused
	EventRestore    Event = "RESTORE"     // an invalidated entry made active again
	EventNoop       Event = "NOOP"        // recorded only when an actor asks for it explicitly
	EventVersion    Event = "NEW_VERSION" // a skill's content changed
)

// Change is one entry of the history log.
type Change struct {
	Seq       int64     `json:"seq"`      // increasing across the store
	EntryID   string    `json:"entry_id"` // empty for namespace events
	Namespace string    `json:"namespace"`
	Event     Event     `json:"event"`
	Old       string    `json:"old,omitempty"` // the text (fact) or body (skill) before
	New       string    `json:"new,omitempty"` // and after
	Actor     string    `json:"actor"`         // "user:alice", "agent:gpt-x", "sync", …
	Reason    string    `json:"reason,omitempty"`
	Time      time.Time `json:"time"`
}

// Namespace describes one namespace.
type Namespace struct {
	Name    string `json:"name"`
	Frozen  bool   `json:"frozen"`
	Facts   int    `json:"facts"`  // active facts
	Skills  int    `json:"skills"` // active skills
	Entries int    `json:"entries"`
}

// AddFactParams adds a fact as given (infer=false). Fact.ID, status and times are assigned by
// the store; Kind defaults to observation. A fact whose normalised text (see statement.Normalize) equals
// an active fact's in the same namespace is merged into it instead: tags, evidence and
// operations are united, and the result says so.
type AddFactParams struct {
	Fact   *Fact
	Actor  string
	Reason string
}

// AddFactResult is the stored fact.
type AddFactResult struct {
	Fact   *Fact
	Merged bool // merged into an existing fact (Fact is that fact)
}

// UpdateFactParams changes an active fact in place; fields left zero are kept. The old text is
// kept in the history.
type UpdateFactParams struct {
	ID         string
	Text       string
	Kind       Kind
	Tags       []string
	Evidence   []string // appended to the fact's evidence
	Confidence float64
	// Merge, when set, is the provenance of a duplicate merged into the fact (see
	// Provenance.Absorb); the change is recorded as a MERGE.
	Merge *Provenance
	// Tried and Worked, when set, are appended to the fact's.
	Tried, Worked []string
	Actor         string
	Reason        string
}

// InvalidateParams marks an entry (fact or skill) invalidated, or, with SupersededBy set,
// superseded by that entry. The entry is kept.
type InvalidateParams struct {
	ID           string
	SupersededBy string
	Actor        string
	Reason       string    // required
	At           time.Time // zero: now
}

// GetParams names an entry by id, or a skill by namespace and name.
type GetParams struct {
	ID        string
	Namespace string
	Name      string
}

// Entry is a fact or a skill.
type Entry struct {
	Fact  *Fact  `json:"fact,omitempty"`
	Skill *Skill `json:"skill,omitempty"`
}

// PutSkillParams stores a skill verbatim under (namespace, name): created with version 1, or,
// when its content (description, body, license, compatibility, allowed tools, metadata, tags)
// differs from the stored one, updated with its version increased. Counts are kept.
type PutSkillParams struct {
	Skill  *Skill
	Actor  string
	Reason string
}

// PutSkillResult is the stored skill.
type PutSkillResult struct {
	Skill   *Skill
	Created bool
	Changed bool // false: identical to the stored version, nothing written
}

// UseParams records that an entry was used and whether it helped: a skill's Uses and
// Successes/Failures, a fact's Successes/Failures.
type UseParams struct {
	ID      string
	Success bool
	Actor   string
}

// HistoryParams selects history: one entry's, or a namespace's (and its children's), oldest
// first. Limit 0 is unlimited; After skips changes with Seq ≤ After.
type HistoryParams struct {
	EntryID   string
	Namespace string
	After     int64
	Limit     int
}

// FreezeParams freezes (or, with Frozen false, unfreezes) a namespace. While frozen, every write
// to it fails with ErrFrozen.
type FreezeParams struct {
	Namespace string
	Frozen    bool
	Actor     string
}

// ImportParams writes entries verbatim — ids, times, status and counts as given — in one
// transaction: everything or nothing. Entries with an id already stored are overwritten (with a
// history entry); others are created.
type ImportParams struct {
	Facts  []*Fact
	Skills []*Skill
	// Entities and Relations of the graph that the entries do not imply (added by a model or a
	// person, or invalidated), written verbatim after the entries.
	Entities  []*Entity
	Relations []Relation
	Actor     string
}

// ImportResult counts what Import wrote.
type ImportResult struct {
	Facts, Skills int
}

// Store is a memory backend: a Reader, a Writer and an Admin in one. Implementations are safe
// for concurrent use, and so are several processes sharing one database. Errors wrap one of the
// sentinels below when they apply. Code that only reads, or only writes, takes the smaller
// interface.
type Store interface {
	Reader
	Writer
	Admin
	// Close releases the store.
	Close() error
}

// Reader reads a memory.
type Reader interface {
	// Get returns one entry; ErrNotFound.
	Get(ctx context.Context, p *GetParams) (*Entry, error)
	// Search yields matching entries, best first (or newest first for a listing).
	Search(ctx context.Context, q *Query) iter.Seq2[*Result, error]
	// History yields changes, oldest first.
	History(ctx context.Context, p *HistoryParams) iter.Seq2[*Change, error]
}

// Writer changes a memory's entries; every change is kept in the history.
type Writer interface {
	// AddFact stores a new fact verbatim, or merges an exact duplicate (see AddFactParams).
	AddFact(ctx context.Context, p *AddFactParams) (*AddFactResult, error)
	// UpdateFact changes an active fact; ErrNotFound, ErrNotActive.
	UpdateFact(ctx context.Context, p *UpdateFactParams) (*Fact, error)
	// Invalidate retires an entry without deleting it.
	Invalidate(ctx context.Context, p *InvalidateParams) (*Entry, error)
	// PutSkill creates or versions a skill.
	PutSkill(ctx context.Context, p *PutSkillParams) (*PutSkillResult, error)
	// Use records a use of an entry and its outcome.
	Use(ctx context.Context, p *UseParams) (*Entry, error)
}

// Admin is what managing a memory as a whole takes: its namespaces, freezing them, importing
// entries.
type Admin interface {
	// Namespaces lists the namespaces that have entries or have been frozen, by name.
	Namespaces(ctx context.Context) ([]Namespace, error)
	// Freeze freezes or unfreezes a namespace.
	Freeze(ctx context.Context, p *FreezeParams) error
	// Import writes entries verbatim, all or nothing.
	Import(ctx context.Context, p *ImportParams) (*ImportResult, error)
}

// Embedder turns texts into vectors; llm.Embedder satisfies it. A store given one indexes every
// entry's text and fuses cosine similarity with BM25 (reciprocal rank fusion).
type Embedder interface {
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Errors a Store returns, wrapped with the entry or namespace concerned.
var (
	ErrNotFound   = errors.New("memory: not found")
	ErrFrozen     = errors.New("memory: namespace is frozen (read-only)")
	ErrNotActive  = errors.New("memory: entry is not active")
	ErrInvalid    = errors.New("memory: invalid entry")
	ErrBadSkill   = errors.New("memory: bad skill")
	ErrClosed     = errors.New("memory: store closed")
	ErrConflict   = errors.New("memory: conflicting write")
	ErrBadQuery   = errors.New("memory: bad query")
	ErrNewerStore = errors.New("memory: the store has a newer schema than this labmate knows")
)

// ValidNamespace reports whether name is a namespace: segments of lowercase letters, digits,
// '.', '_' and '-' separated by '/', such as "user", "user/skills" or "team.x/project-1".
func ValidNamespace(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty namespace", ErrInvalid)
	}
	for seg := range strings.SplitSeq(name, "/") {
		if seg == "" {
			return fmt.Errorf("%w: namespace %q: empty segment", ErrInvalid, name)
		}
		for _, r := range seg {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
				return fmt.Errorf("%w: namespace %q: %q is not allowed (lowercase letters, digits, '.', '_', '-' and '/')", ErrInvalid, name, r)
			}
		}
	}
	return nil
}

// Validate checks a fact before it is stored: a valid namespace, non-empty text, a fact kind,
// a confidence in [0, 1], a known status.
func (f *Fact) Validate() error {
	if err := ValidNamespace(f.Namespace); err != nil {
		return fmt.Errorf("fact %q: %w", f.ID, err)
	}
	if strings.TrimSpace(f.Text) == "" {
		return fmt.Errorf("%w: fact %q: empty text", ErrInvalid, f.ID)
	}
	if !slices.Contains(FactKinds, f.Kind) {
		// Said to a user who typed --kind (the fact has no id yet) as much as to a model.
		kinds := make([]string, len(FactKinds))
		for i, k := range FactKinds {
			kinds[i] = string(k)
		}
		who := "a fact"
		if f.ID != "" {
			who = "fact " + f.ID
		}
		return fmt.Errorf("%w: %s cannot be of kind %q: the kinds are %s", ErrInvalid, who, f.Kind, strings.Join(kinds, ", "))
	}
	if f.Confidence < 0 || f.Confidence > 1 || math.IsNaN(f.Confidence) {
		return fmt.Errorf("%w: fact %q: confidence %v is not in [0, 1]", ErrInvalid, f.ID, f.Confidence)
	}
	if f.Status != "" && !validStatus(f.Status) {
		return fmt.Errorf("%w: fact %q: status %q", ErrInvalid, f.ID, f.Status)
	}
	return nil
}

// Validate checks a skill's fields against the Agent Skills rules (see ValidSkillName) and its
// namespace; memory/skillmd reports the same problems with file and line.
func (s *Skill) Validate() error {
	if err := ValidNamespace(s.Namespace); err != nil {
		return fmt.Errorf("skill %q: %w", s.Name, err)
	}
	if err := ValidSkillName(s.Name); err != nil {
		return err
	}
	if strings.TrimSpace(s.Description) == "" {
		return fmt.Errorf("%w: skill %q: description is required", ErrBadSkill, s.Name)
	}
	if n := utf8.RuneCountInString(s.Description); n > MaxDescription {
		return fmt.Errorf("%w: skill %q: description is %d characters; at most %d", ErrBadSkill, s.Name, n, MaxDescription)
	}
	if s.Status != "" && !validStatus(s.Status) {
		return fmt.Errorf("%w: skill %q: status %q", ErrBadSkill, s.Name, s.Status)
	}
	return nil
}

// Limits of the Agent Skills specification.
const (
	MaxSkillName     = 64
	MaxDescription   = 1024
	MaxCompatibility = 500
)

// ValidSkillName checks the Agent Skills name rules: 1–64 characters, lowercase letters, digits
// and hyphens, not starting or ending with a hyphen, no two hyphens in a row.
func ValidSkillName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: name is required", ErrBadSkill)
	case utf8.RuneCountInString(name) > MaxSkillName:
		return fmt.Errorf("%w: name %q: longer than %d characters", ErrBadSkill, name, MaxSkillName)
	case strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-"):
		return fmt.Errorf("%w: name %q: must not start or end with a hyphen", ErrBadSkill, name)
	case strings.Contains(name, "--"):
		return fmt.Errorf("%w: name %q: must not contain two hyphens in a row", ErrBadSkill, name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("%w: name %q: only lowercase letters, digits and hyphens", ErrBadSkill, name)
		}
	}
	return nil
}

func validStatus(s Status) bool {
	return s == StatusActive || s == StatusSuperseded || s == StatusInvalidated
}
