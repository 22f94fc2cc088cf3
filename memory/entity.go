package memory

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"
)

// EntityKind is what an entity is.
type EntityKind string

// Kinds of entity.
const (
	EntityMaterial  EntityKind = "material"  // an element, a compound, a phase ("fcc Cu")
	EntityMethod    EntityKind = "method"    // a numerical or experimental method ("explicit Euler", "DFT")
	EntitySoftware  EntityKind = "software"  // a program, with its version as a separate entity
	EntityParameter EntityKind = "parameter" // a parameter of a method or program ("mixing_beta", "dt")
	EntityProperty  EntityKind = "property"  // a measured or computed property ("lattice constant")
	EntityName      EntityKind = "name"      // another proper name (a potential, a benchmark problem)
)

// EntityKinds are the kinds an Entity may have.
var EntityKinds = []EntityKind{EntityMaterial, EntityMethod, EntitySoftware, EntityParameter, EntityProperty, EntityName}

// Entity is a canonical thing facts and skills talk about, with the other names it goes by.
// Entities are linked to the entries that mention them and to each other; retrieval expands a
// query by them ("Cu" finds "copper" and "fcc Cu"). An entity is invalidated, never deleted.
type Entity struct {
	ID        string     `json:"id"`   // KIND:lower-case name, e.g. "material:cu"
	Name      string     `json:"name"` // canonical, e.g. "Cu"
	Kind      EntityKind `json:"kind"`
	Aliases   []string   `json:"aliases,omitempty"` // lower case, e.g. "copper"
	Status    Status     `json:"status"`
	Reason    string     `json:"reason,omitempty"`
	Source    string     `json:"source,omitempty"` // "extracted", or who added it ("model:…", "user:…")
	ValidFrom time.Time  `json:"valid_from"`
	InvalidAt time.Time  `json:"invalid_at,omitzero"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
}

// Relation links two entities: "phase_of" (fcc Cu → Cu), "version_of" (Quantum ESPRESSO 7.2 →
// Quantum ESPRESSO), or any relation a model or a person adds. It is valid from ValidFrom until
// InvalidAt (zero: still valid).
type Relation struct {
	From      string    `json:"from"`
	Rel       string    `json:"rel"`
	To        string    `json:"to"`
	Source    string    `json:"source,omitempty"`
	ValidFrom time.Time `json:"valid_from"`
	InvalidAt time.Time `json:"invalid_at,omitzero"`
}

// Relations made by extraction.
const (
	RelPhaseOf   = "phase_of"
	RelVersionOf = "version_of"
)

// Mention is an entity found in a text.
type Mention struct {
	ID   string     `json:"id"`
	Name string     `json:"name"`
	Kind EntityKind `json:"kind"`
	// Aliases are the entity's other names known to labmate.
	Aliases []string `json:"aliases,omitempty"`
	// Text is how the text wrote it.
	Text string `json:"text"`
}

// EntityID is the id of the entity of that kind and name.
func EntityID(kind EntityKind, name string) string {
	return string(kind) + ":" + strings.ToLower(strings.TrimSpace(name))
}

// EntityQuery selects entities: by alias (any of its names, case-insensitive), kind, the entry
// that mentions them; Status empty means active only.
type EntityQuery struct {
	Names  []string     `json:"names,omitempty"`
	Kinds  []EntityKind `json:"kinds,omitempty"`
	Entry  string       `json:"entry,omitempty"`
	Status []Status     `json:"status,omitempty"`
	Limit  int          `json:"limit,omitempty"`
}

// PutEntityParams creates an entity or adds aliases to it (a model's or a person's knowledge:
// "Cu_u3 is an EAM potential for Cu").
type PutEntityParams struct {
	Entity *Entity
	Actor  string
}

// RelateParams adds a relation between two entities (created when missing, by id).
type RelateParams struct {
	Relation *Relation
	Actor    string
}

// InvalidateEntityParams retires an entity (or one relation, with Rel and To set): kept, no
// longer used to expand retrieval after At.
type InvalidateEntityParams struct {
	ID     string
	Rel    string
	To     string
	Reason string
	At     time.Time
	Actor  string
}

// Graph is the entity graph of a Store; memory/sqlite and memory/postgres implement it in their
// own SQL. The store keeps it in step with its entries: every fact and skill written is linked to
// the entities statement.Extract finds in it.
type Graph interface {
	GraphReader
	GraphWriter
}

// GraphReader reads the entity graph.
type GraphReader interface {
	Entities(ctx context.Context, q *EntityQuery) iter.Seq2[*Entity, error]
	Relations(ctx context.Context, entityID string) ([]Relation, error)
	// GraphExport returns what the entries do not imply: entities and relations added by a model
	// or a person, or invalidated (the others are extracted again from the entries).
	GraphExport(ctx context.Context) ([]*Entity, []Relation, error)
}

// GraphWriter adds to the entity graph what the entries do not imply, or invalidates it.
type GraphWriter interface {
	PutEntity(ctx context.Context, p *PutEntityParams) (*Entity, error)
	Relate(ctx context.Context, p *RelateParams) error
	InvalidateEntity(ctx context.Context, p *InvalidateEntityParams) error
}

// Validate checks an entity before it is stored.
func (e *Entity) Validate() error {
	if strings.TrimSpace(e.Name) == "" {
		return fmt.Errorf("%w: entity %q: empty name", ErrInvalid, e.ID)
	}
	if !slices.Contains(EntityKinds, e.Kind) {
		return fmt.Errorf("%w: entity %q: kind %q (want one of %v)", ErrInvalid, e.Name, e.Kind, EntityKinds)
	}
	if e.ID != "" && e.ID != EntityID(e.Kind, e.Name) {
		return fmt.Errorf("%w: entity %q: id %q (want %q)", ErrInvalid, e.Name, e.ID, EntityID(e.Kind, e.Name))
	}
	return nil
}
