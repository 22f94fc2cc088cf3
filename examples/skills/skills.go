// Package skills embeds labmate's skill library: Agent Skills folders (NAME/SKILL.md and
// NAME/scripts/…) for the materials workflows scientists repeat — equation of state, band gap,
// DOS, effective mass, optical phonon, dielectric constant and work function with Quantum
// ESPRESSO; cohesive energy, elastic constants, surface energy, vacancy formation energy and
// concentration and thermal expansion with LAMMPS. Each SKILL.md names its references under
// metadata (workflow-check-…: value ± tolerance | citation); `labmate eval workflows` runs
// every skill's scripts and checks them, `labmate eval materials` runs eos-lattice-constant's
// for many elements, and `labmate memory import --builtin` imports the library into the
// read-only namespace Namespace.
package skills

import (
	"embed"
	"io/fs"
	"path"
)

// Namespace is the read-only memory namespace the library is imported into.
const Namespace = "builtin/skills"

// FS holds every skill folder: NAME/SKILL.md and NAME/scripts/….
//
//go:embed */SKILL.md */scripts/*
var FS embed.FS

// Names lists the skills, sorted.
func Names() []string {
	var out []string
	matches, _ := fs.Glob(FS, "*/SKILL.md")
	for _, m := range matches {
		out = append(out, path.Dir(m))
	}
	return out
}
