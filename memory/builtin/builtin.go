// Package builtin is the memory that ships with labmate: the skill library of examples/skills
// (materials workflows validated against published references by `labmate eval workflows`),
// imported into the read-only namespace Namespace like any other memory — searched and
// recalled with the user's own, exported with provenance, never revised by the user's runs
// (which write their own copies in their own namespace).
package builtin

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/labmate/labmate/examples/skills"
	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/skillmd"
)

// Namespace is where the library lives, frozen.
const Namespace = skills.Namespace

// Source is the provenance source of a shipped skill NAME.
func Source(name string) string { return "labmate:examples/skills/" + name + "/SKILL.md" }

// Skills parses the library: every skill with Namespace set and its provenance the file it
// ships in.
func Skills() ([]*memory.Skill, error) {
	var out []*memory.Skill
	for _, name := range skills.Names() {
		p := path.Join(name, skillmd.FileName)
		b, err := fs.ReadFile(skills.FS, p)
		if err != nil {
			return nil, fmt.Errorf("builtin: %w", err)
		}
		sk, err := skillmd.Parse(path.Join("examples/skills", p), b)
		if err != nil {
			return nil, fmt.Errorf("builtin: %w", err)
		}
		sk.Namespace = Namespace
		sk.Provenance.Source = Source(name)
		out = append(out, sk)
	}
	return out, nil
}

// Result counts what Import did.
type Result struct {
	Created   int `json:"created"`
	Updated   int `json:"updated"`
	Unchanged int `json:"unchanged"`
}

// Import writes the library into Namespace — each skill new, a new version (this labmate
// ships a changed one) or unchanged — and leaves the namespace frozen. It unfreezes it only for
// the time of the writes.
func Import(ctx context.Context, s memory.Store, actor string) (*Result, error) {
	sks, err := Skills()
	if err != nil {
		return nil, err
	}
	if err := s.Freeze(ctx, &memory.FreezeParams{Namespace: Namespace, Frozen: false, Actor: actor}); err != nil {
		return nil, fmt.Errorf("builtin: unfreezing %s: %w", Namespace, err)
	}
	res := &Result{}
	var werr error
	for _, sk := range sks {
		r, err := s.PutSkill(ctx, &memory.PutSkillParams{Skill: sk, Actor: actor, Reason: "labmate's built-in skill library"})
		if err != nil {
			werr = fmt.Errorf("builtin: %s: %w", sk.Name, err)
			break
		}
		switch {
		case r.Created:
			res.Created++
		case r.Changed:
			res.Updated++
		default:
			res.Unchanged++
		}
	}
	if err := s.Freeze(ctx, &memory.FreezeParams{Namespace: Namespace, Frozen: true, Actor: actor}); err != nil {
		return nil, errors.Join(werr, fmt.Errorf("builtin: freezing %s: %w", Namespace, err))
	}
	return res, werr
}

// Ensure imports the library when the store does not hold Namespace yet (its first use), and
// reports whether it did.
func Ensure(ctx context.Context, s memory.Store, actor string) (bool, error) {
	nss, err := s.Namespaces(ctx)
	if err != nil {
		return false, fmt.Errorf("builtin: %w", err)
	}
	if slices.ContainsFunc(nss, func(n memory.Namespace) bool { return n.Name == Namespace }) {
		return false, nil
	}
	_, err = Import(ctx, s, actor)
	return err == nil, err
}
