package perception

import (
	"fmt"
	"slices"
	"strings"
)

// Profile names the software whose output a Monitor reads. A profile decides which progress
// formats become telemetry and which fault signatures are known, on top of what every
// profile has: the language patterns, the table reader and the numeric detectors.
type Profile string

// Profiles.
const (
	// ProfileGeneric reads what any program prints: `name = value` pairs (parsed by the
	// kernel), prose pairs (`epoch 8 | loss 0.3`), tables with a header (aligned columns,
	// CSV, pipe-separated, pandas frames) and integrators' time and step size.
	ProfileGeneric Profile = "generic"
	// ProfileOctave, ProfilePython and ProfileShell are the generic profile, chosen from the
	// kernel; they name what runs.
	ProfileOctave Profile = "octave"
	ProfilePython Profile = "python"
	ProfileShell  Profile = "shell"
	// ProfileQE is Quantum ESPRESSO's pw.x: SCF iterations, estimated scf accuracy, total
	// energy, total force and pressure as telemetry; error blocks, "convergence NOT
	// achieved", "S matrix not positive definite", charge warnings and an SCF that diverges
	// or stalls as faults.
	ProfileQE Profile = "qe"
	// ProfileLAMMPS is LAMMPS (lmp): every column of the thermo table (`one` style, with its
	// header) or of `multi` blocks as telemetry; ERROR and WARNING lines, lost and
	// out-of-range atoms, an exploding temperature or energy and energy drift under a
	// declared NVE integrator as faults.
	ProfileLAMMPS Profile = "lammps"
)

// profileAliases maps what a user may type to a profile.
var profileAliases = map[string]Profile{
	"": ProfileGeneric, "generic": ProfileGeneric, "none": ProfileGeneric,
	"octave": ProfileOctave, "matlab": ProfileOctave,
	"python": ProfilePython, "scipy": ProfilePython,
	"shell": ProfileShell, "bash": ProfileShell,
	"qe": ProfileQE, "pw.x": ProfileQE, "pw": ProfileQE, "espresso": ProfileQE, "quantum-espresso": ProfileQE, "quantum_espresso": ProfileQE,
	"lammps": ProfileLAMMPS, "lmp": ProfileLAMMPS,
}

// Profiles lists the profile names ParseProfile accepts as canonical.
func Profiles() []Profile {
	return []Profile{ProfileGeneric, ProfileOctave, ProfilePython, ProfileShell, ProfileQE, ProfileLAMMPS}
}

// ParseProfile resolves a profile name or alias (case-insensitive: "qe", "pw.x",
// "quantum-espresso", "lammps", "lmp", "octave", "python", "shell", "generic"). The error
// wraps ErrConfig and lists the choices.
func ParseProfile(s string) (Profile, error) {
	if p, ok := profileAliases[strings.ToLower(strings.TrimSpace(s))]; ok {
		return p, nil
	}
	names := make([]string, 0, len(Profiles()))
	for _, p := range Profiles() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("%w: unknown profile %q: choose one of %s", ErrConfig, s, strings.Join(names, ", "))
}

// ProfileFor chooses the profile from what a cell runs: a cell that starts Quantum ESPRESSO's
// pw.x (directly, through mpirun, or from Python or Octave as a command) gets ProfileQE, one
// that starts LAMMPS (lmp, lmp_serial, lmp_mpi…, or Python's lammps module) ProfileLAMMPS —
// whichever comes first in the code —, any other cell its kernel's profile.
func ProfileFor(kernel, code string) Profile {
	qe, lmp := commandAt(code, isPWCommand), commandAt(code, isLAMMPSCommand)
	switch {
	case qe >= 0 && (lmp < 0 || qe < lmp):
		return ProfileQE
	case lmp >= 0:
		return ProfileLAMMPS
	}
	switch kernel {
	case "octave":
		return ProfileOctave
	case "python":
		return ProfilePython
	case "shell":
		return ProfileShell
	}
	return ProfileGeneric
}

// commandAt is the offset of the first word of code that is accepts, or -1. Words are
// separated by blanks, quotes, brackets, commas, semicolons, pipes, redirections and slashes
// (so /usr/bin/pw.x and "pw.x" count); comment lines (#, %) are skipped.
func commandAt(code string, accepts func(string) bool) int {
	off := 0
	for line := range strings.Lines(code) {
		t := strings.TrimLeft(line, " \t")
		if !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, "%") {
			for i := 0; i < len(line); {
				for i < len(line) && isCommandSep(line[i]) {
					i++
				}
				j := i
				for j < len(line) && !isCommandSep(line[j]) {
					j++
				}
				if j > i && accepts(line[i:j]) {
					return off + i
				}
				i = j
			}
		}
		off += len(line)
	}
	return -1
}

func isCommandSep(c byte) bool {
	return strings.IndexByte(" \t\r\n'\"`()[]{},;|&<>/=", c) >= 0
}

func isPWCommand(w string) bool { return w == "pw.x" }

// isLAMMPSCommand: lmp and the names Debian and LAMMPS' own builds give it, and Python's
// `import lammps` / `from lammps import`.
func isLAMMPSCommand(w string) bool {
	return w == "lmp" || w == "lammps" || slices.Contains([]string{"lmp_serial", "lmp_mpi", "lmp_stable", "lmp_openmpi", "lmp_mpich"}, w)
}

// profile is what a Profile switches on in a Monitor.
type profile struct {
	name   Profile
	qe     bool
	lammps bool
}

func newProfile(p Profile) (profile, error) {
	if p == "" {
		p = ProfileGeneric
	}
	p, err := ParseProfile(string(p))
	if err != nil {
		return profile{}, err
	}
	return profile{name: p, qe: p == ProfileQE, lammps: p == ProfileLAMMPS}, nil
}
