package perception

import (
	"fmt"
	"slices"
	"strings"

	"github.com/labmate/labmate/protocol"
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

// profileAliases maps what a user may type to a profile of the common rules; the codes'
// names and aliases are in codes.
var profileAliases = map[string]Profile{
	"": ProfileGeneric, "generic": ProfileGeneric, "none": ProfileGeneric,
	"octave": ProfileOctave, "matlab": ProfileOctave,
	"python": ProfilePython, "scipy": ProfilePython,
	"shell": ProfileShell, "bash": ProfileShell,
}

// code is what perception knows of one scientific code's output beyond the common rules: a
// Profile of its own. Each code is one file that registers it (registerCode, from an init
// function): qe.go, lammps.go. See "Adding a code" in the package doc.
type code struct {
	name    Profile
	aliases []string // other names ParseProfile accepts (lower case)
	// runs reports whether a word of a cell's or a job's code starts the code (ProfileFor):
	// "pw.x", "lmp". Words are split at blanks, quotes, brackets, redirections and slashes.
	runs func(word string) bool
	// reader makes the state that reads one operation's output; cfg is the operation's.
	reader func(m *Monitor, cfg *Config) reader
}

// reader reads one operation's output for its code, beside the common rules.
type reader interface {
	// line reads one line of stdout, stderr (kind) or a followed file: the telemetry it finds
	// goes to m.emit (the Monitor judges it and hands it on through Parsed), the faults to
	// m.raise(detProfile, …) with the line as evidence. st is the line's stream: printed
	// output and each followed file are read apart (st.index).
	line(m *Monitor, st *stream, kind protocol.ObservationKind, line string)
	// sample applies the code's rules to one telemetry sample of series sr, after the
	// common detectors judged it (any source: the helper's, a printed pair, a table row).
	sample(m *Monitor, sr *series, s *protocol.Sample)
}

// codes are the registered codes, in registration order.
var codes []*code

// registerCode adds a code's profile. It panics on a name or alias already taken: two codes
// cannot share one.
func registerCode(c *code) {
	for _, n := range append([]string{string(c.name)}, c.aliases...) {
		if _, ok := lookupProfile(n); ok {
			panic("perception: profile " + n + " registered twice")
		}
	}
	codes = append(codes, c)
}

// lookupProfile resolves a lower-case name or alias.
func lookupProfile(name string) (Profile, bool) {
	if p, ok := profileAliases[name]; ok {
		return p, true
	}
	for _, c := range codes {
		if string(c.name) == name || slices.Contains(c.aliases, name) {
			return c.name, true
		}
	}
	return "", false
}

// codeOf is the registered code of p; nil for the common profiles.
func codeOf(p Profile) *code {
	for _, c := range codes {
		if c.name == p {
			return c
		}
	}
	return nil
}

// Profiles lists the profile names ParseProfile accepts as canonical: the common ones, then
// every registered code's.
func Profiles() []Profile {
	out := []Profile{ProfileGeneric, ProfileOctave, ProfilePython, ProfileShell}
	for _, c := range codes {
		out = append(out, c.name)
	}
	return out
}

// ParseProfile resolves a profile name or alias (case-insensitive: "qe", "pw.x",
// "quantum-espresso", "lammps", "lmp", "octave", "python", "shell", "generic"). The error
// wraps ErrConfig and lists the choices.
func ParseProfile(s string) (Profile, error) {
	if p, ok := lookupProfile(strings.ToLower(strings.TrimSpace(s))); ok {
		return p, nil
	}
	names := make([]string, 0, len(Profiles()))
	for _, p := range Profiles() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("%w: unknown profile %q: choose one of %s", ErrConfig, s, strings.Join(names, ", "))
}

// ProfileFor chooses the profile from what a cell runs: a cell that starts a registered code
// (directly, through mpirun, or from Python or Octave as a command) gets its profile —
// ProfileQE for Quantum ESPRESSO's pw.x, ProfileLAMMPS for LAMMPS (lmp, lmp_serial,
// lmp_mpi…, or Python's lammps module), whichever comes first in the code —, any other cell
// its kernel's profile.
func ProfileFor(kernel, code string) Profile {
	best, first := Profile(""), -1
	for _, c := range codes {
		if at := commandAt(code, c.runs); at >= 0 && (first < 0 || at < first) {
			best, first = c.name, at
		}
	}
	if first >= 0 {
		return best
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

// profile is what a Profile switches on in a Monitor.
type profile struct {
	name   Profile
	code   *code // nil for the common profiles
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
	return profile{name: p, code: codeOf(p), qe: p == ProfileQE, lammps: p == ProfileLAMMPS}, nil
}
