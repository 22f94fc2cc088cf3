package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/statement"
)

// row is an entry as stored.
type row struct {
	fact  *memory.Fact
	skill *memory.Skill
}

func (r row) entry() *memory.Entry { return &memory.Entry{Fact: r.fact, Skill: r.skill} }

func (r row) id() string {
	if r.skill != nil {
		return r.skill.ID
	}
	return r.fact.ID
}

func (r row) namespace() string {
	if r.skill != nil {
		return r.skill.Namespace
	}
	return r.fact.Namespace
}

func decode(kind string, data []byte) (row, error) {
	if kind == string(memory.KindSkill) {
		var sk memory.Skill
		if err := json.Unmarshal(data, &sk); err != nil {
			return row{}, fmt.Errorf("decoding a stored skill: %w", err)
		}
		return row{skill: &sk}, nil
	}
	var f memory.Fact
	if err := json.Unmarshal(data, &f); err != nil {
		return row{}, fmt.Errorf("decoding a stored fact: %w", err)
	}
	return row{fact: &f}, nil
}

// queryer is a *sql.DB or *sql.Tx.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func (s *Store) get(ctx context.Context, q queryer, id string) (row, error) {
	var kind string
	var data []byte
	err := s.queryRow(ctx, q, "SELECT kind, data FROM entries WHERE id = ?", id).Scan(&kind, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, fmt.Errorf("%w: entry %q", memory.ErrNotFound, id)
	}
	if err != nil {
		return row{}, err
	}
	return decode(kind, data)
}

// frozen fails with ErrFrozen when ns or one of its parents is frozen.
func (s *Store) frozen(ctx context.Context, q queryer, ns string) error {
	var name string
	err := s.queryRow(ctx, q, `SELECT name FROM namespaces WHERE frozen = 1 AND (name = ? OR name = substr(?, 1, length(name)) AND substr(?, length(name) + 1, 1) = '/') ORDER BY name LIMIT 1`, ns, ns, ns).Scan(&name)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return err
	case name == ns:
		return fmt.Errorf("%w: %s", memory.ErrFrozen, ns)
	default:
		return fmt.Errorf("%w: %s (inside frozen %s)", memory.ErrFrozen, ns, name)
	}
}

func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// searchText is what full-text search and embeddings index.
func (r row) searchText() string {
	if sk := r.skill; sk != nil {
		return strings.Join(append([]string{sk.Name, sk.Description, sk.Body}, sk.Tags...), "\n")
	}
	return strings.Join(append([]string{r.fact.Text}, r.fact.Tags...), "\n")
}

func (r row) tags() []string {
	if r.skill != nil {
		return r.skill.Tags
	}
	return r.fact.Tags
}

// put inserts or replaces the entry's row and its tags.
func (s *Store) put(ctx context.Context, tx *sql.Tx, r row, insert bool) error {
	var (
		kind, name, norm, status  string
		created, updated, validAt time.Time
		invalidAt                 time.Time
		data                      []byte
		err                       error
	)
	if sk := r.skill; sk != nil {
		kind, name, status = string(memory.KindSkill), sk.Name, string(sk.Status)
		created, updated, validAt = sk.CreatedAt, sk.UpdatedAt, sk.CreatedAt
		data, err = json.Marshal(sk)
	} else {
		f := r.fact
		kind, norm, status = string(f.Kind), normKey(f.Text), string(f.Status)
		created, updated, validAt, invalidAt = f.CreatedAt, f.UpdatedAt, f.ValidFrom, f.InvalidAt
		data, err = json.Marshal(f)
	}
	if err != nil {
		return err
	}
	var nameArg, normArg any
	if name != "" {
		nameArg = name
	}
	if norm != "" && status == string(memory.StatusActive) {
		normArg = norm // only active facts take part in exact-duplicate detection
	}
	search := r.searchText()
	if insert {
		var res sql.Result
		res, err = s.exec(ctx, tx, `INSERT INTO entries (id, namespace, kind, name, norm, status, search, data, created, updated, valid_from, invalid_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.id(), r.namespace(), kind, nameArg, normArg, status, search, data, nanos(created), nanos(updated), nanos(validAt), nanos(invalidAt))
		if err == nil && s.d.FTSInsert != "" {
			var n int64
			if n, err = res.LastInsertId(); err == nil {
				_, err = s.exec(ctx, tx, s.d.FTSInsert, n, search)
			}
		}
	} else {
		if s.d.FTSInsert != "" {
			var n int64
			var old string
			if err = s.queryRow(ctx, tx, "SELECT n, search FROM entries WHERE id = ?", r.id()).Scan(&n, &old); err == nil && old != search {
				if _, err = s.exec(ctx, tx, s.d.FTSDelete, n, old); err == nil {
					_, err = s.exec(ctx, tx, s.d.FTSInsert, n, search)
				}
			}
		}
		if err == nil {
			_, err = s.exec(ctx, tx, `UPDATE entries SET namespace = ?, kind = ?, name = ?, norm = ?, status = ?, search = ?, data = ?,
			created = ?, updated = ?, valid_from = ?, invalid_at = ? WHERE id = ?`,
				r.namespace(), kind, nameArg, normArg, status, search, data, nanos(created), nanos(updated), nanos(validAt), nanos(invalidAt), r.id())
		}
		if err == nil {
			_, err = s.exec(ctx, tx, "DELETE FROM entry_tags WHERE entry_id = ?", r.id())
		}
	}
	if err != nil {
		if s.d.Unique != nil && s.d.Unique(err) {
			return fmt.Errorf("%w: %s %q in %s: another active entry has the same key: %w", memory.ErrConflict, kind, r.id(), r.namespace(), err)
		}
		return err
	}
	for _, tag := range uniq(r.tags()) {
		if _, err := s.exec(ctx, tx, "INSERT INTO entry_tags (entry_id, tag) VALUES (?, ?)", r.id(), tag); err != nil {
			return err
		}
	}
	return s.link(ctx, tx, r, insert, s.stamp())
}

func uniq(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}

// union appends the elements of b missing from a, keeping a's order.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

func (s *Store) log(ctx context.Context, tx *sql.Tx, c *memory.Change) error {
	_, err := s.exec(ctx, tx, `INSERT INTO history (entry_id, namespace, event, old, new, actor, reason, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		c.EntryID, c.Namespace, string(c.Event), c.Old, c.New, c.Actor, c.Reason, c.Time.UnixNano())
	return err
}

// vector embeds text when the store has an embedder.
func (s *Store) vector(ctx context.Context, text string) ([]float32, error) {
	if s.emb == nil {
		return nil, nil
	}
	vs, err := s.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embedding with %s: %w", s.emb.Name(), err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embedding with %s: %d vectors for 1 text", s.emb.Name(), len(vs))
	}
	return vs[0], nil
}

func (s *Store) putVector(ctx context.Context, tx *sql.Tx, id string, v []float32) error {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	if _, err := s.exec(ctx, tx, "DELETE FROM vectors WHERE entry_id = ?", id); err != nil {
		return err
	}
	_, err := s.exec(ctx, tx, "INSERT INTO vectors (entry_id, model, vec) VALUES (?, ?, ?)", id, s.emb.Name(), b)
	return err
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// normKey is the exact-duplicate key of a fact's text: a digest of statement.Normalize, so that
// the unique index stays small however long the text (PostgreSQL's B-tree rows are limited).
func normKey(text string) string {
	sum := sha256.Sum256([]byte(statement.Normalize(text)))
	return hex.EncodeToString(sum[:16])
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }
