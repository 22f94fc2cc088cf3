// Package skills embeds labmate's example Agent Skills (one folder with a SKILL.md each), so
// that what a skill's procedure runs can be run by labmate itself: `labmate eval materials`
// runs eos-lattice-constant's scripts. `labmate memory sync examples/skills` imports them into
// memory.
package skills

import "embed"

// FS holds every skill folder: NAME/SKILL.md and NAME/scripts/….
//
//go:embed eos-lattice-constant
var FS embed.FS
