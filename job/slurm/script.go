package slurm

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/labmate/labmate/job"
)

const mib = 1 << 20

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// batchScript writes the script sbatch runs: the resources as #SBATCH lines, the environment
// as exports, then the job itself — a Command exec'd (so that a signal that ends it is the
// batch step's own, reported in Slurm's ExitCode N:S), or the Script's text as the body.
func batchScript(spec *job.Spec, stdout, stderr string) (string, error) {
	for _, p := range []struct{ field, v string }{
		{"name", spec.Name}, {"workspace", spec.Workspace}, {"resources.partition", spec.Resources.Partition},
	} {
		if strings.ContainsAny(p.v, "\n\r\x00") {
			return "", fmt.Errorf("job spec: %s %q: holds a line break", p.field, p.v)
		}
	}
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	opt := func(name, v string) { fmt.Fprintf(&b, "#SBATCH --%s=%s\n", name, quoteOpt(v)) }
	name := spec.Name
	if name == "" {
		name = "labmate"
	}
	opt("job-name", name)
	opt("chdir", spec.Workspace)
	opt("output", stdout)
	opt("error", stderr)
	opt("ntasks", "1")
	r := spec.Resources
	if r.Cores > 0 {
		opt("cpus-per-task", fmt.Sprint(r.Cores))
	}
	if r.MemoryBytes > 0 {
		opt("mem", fmt.Sprintf("%dM", (r.MemoryBytes+mib-1)/mib))
	}
	if r.WallTime > 0 {
		opt("time", fmt.Sprint(wallMinutes(r.WallTime)))
	}
	if r.GPUs > 0 {
		opt("gres", fmt.Sprintf("gpu:%d", r.GPUs))
	}
	if r.Partition != "" {
		opt("partition", r.Partition)
	}
	// The environment travels as exports below rather than in --export, whose list is split
	// at commas that a value may hold.
	opt("export", "ALL")
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		if !envName.MatchString(k) {
			return "", fmt.Errorf("job spec: env %q: not a variable name", k)
		}
		fmt.Fprintf(&b, "export %s=%s\n", k, shellQuote(spec.Env[k]))
	}
	if len(spec.Command) > 0 {
		b.WriteString("exec")
		for _, a := range spec.Command {
			b.WriteString(" " + shellQuote(a))
		}
		b.WriteString("\n")
	} else {
		b.WriteString(spec.Script)
		if !strings.HasSuffix(spec.Script, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String(), nil
}

// wallMinutes rounds a wall time up to Slurm's resolution, whole minutes.
func wallMinutes(d time.Duration) int64 {
	return int64((d + time.Minute - 1) / time.Minute)
}

// quoteOpt quotes an #SBATCH value the way sbatch's own parser reads it: double quotes, with
// backslash escapes.
func quoteOpt(v string) string {
	if v != "" && !strings.ContainsAny(v, " \t\"'\\|#$") {
		return v
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(v) + `"`
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
