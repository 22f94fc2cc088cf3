package main

import (
	"strings"
	"testing"

	"github.com/labmate/labmate/job/slurm/slurmtest"
)

// shellWords splits a line into words: blanks separate, quotes group, # starts a comment.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	in, quote, word := false, rune(0), false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, word = r, true
		case r == ' ' || r == '\t':
			if word {
				words = append(words, cur.String())
				cur.Reset()
				word = false
			}
		case r == '#' && !word:
			in = true
		default:
			cur.WriteRune(r)
			word = true
		}
		if in {
			break
		}
	}
	if word {
		words = append(words, cur.String())
	}
	return words
}

// jobREADME runs the labmate commands of the README's "Long jobs" section as shown, in
// order, ID being the job the first one submitted, the Slurm one against a real one-node
// cluster started for it. Its curl lines need a running server's URL and token (server/jobs_test.go sends them).
func jobREADME(t *testing.T, st *readmeState, lines []readmeLine) {
	var cmds [][]string
	for _, l := range lines {
		if args := shellWords(l.text); args[0] == "labmate" {
			cmds = append(cmds, args[1:])
		} else {
			t.Logf("%s: not run: the REST API of a running labmate serve, with its URL and token", l)
		}
	}
	if len(cmds) < 9 {
		t.Fatalf("the README shows %d labmate commands: %q", len(cmds), cmds)
	}
	dir := st.root
	env := []string{"XDG_DATA_HOME=" + t.TempDir()}
	var id, slurmID string
	for _, args := range cmds {
		for i, a := range args {
			if a == "ID" {
				args[i] = id
			}
		}
		if strings.Contains(strings.Join(args, " "), "--scheduler slurm") {
			// The cluster starts only now, so that the local jobs are tested where a
			// one-node Slurm cannot be had (slurmtest skips then).
			env = append(env, slurmtest.Start(t).Env...)
		}
		out, errOut, code := labmateEnv(t, env, dir, "", args...)
		t.Logf("labmate %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
		if code != 0 {
			t.Fatalf("labmate %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, out, errOut)
		}
		switch {
		case args[0] == "job" && args[1] == "submit" && id == "":
			id = strings.TrimSpace(out)
		case args[0] == "job" && args[1] == "submit" && strings.HasPrefix(out, "slurm-"):
			slurmID = strings.TrimSpace(out)
		case len(args) > 2 && args[1] == "logs" && args[2] == "-f":
			if !strings.Contains(out, "relaxing\n") || !strings.Contains(out, "[md.log] step 4 E = -4.0\n") || !strings.Contains(out, "relaxed\n") {
				t.Errorf("logs -f:\n%s", out)
			}
		case args[1] == "list":
			if !strings.Contains(out, id) {
				t.Errorf("list lacks %s:\n%s", id, out)
			}
		}
	}
	if !strings.HasPrefix(id, "local-") || slurmID == "" {
		t.Fatalf("submitted %q and %q", id, slurmID)
	}
	if out, errOut, code := labmateEnv(t, env, dir, "", "job", "logs", "-f", slurmID); code != 0 || out != "on the cluster\n" {
		t.Errorf("the Slurm job: exit %d, %q, %s", code, out, errOut)
	}
}
