package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

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
// cluster started for it; then its curl lines, as shown, against a labmate serve on loopback
// without a token (URL), ID being the job the first one posted.
func jobREADME(t *testing.T, st *readmeState, lines []readmeLine) {
	var cmds [][]string
	var curls []readmeLine
	for _, l := range lines {
		if args := shellWords(l.text); args[0] == "labmate" {
			cmds = append(cmds, args[1:])
		} else {
			curls = append(curls, l)
		}
	}
	defer restREADME(t, st, curls)
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
		// The README cancels the job it waited for: it had ended, which cancel says, exiting 1.
		ended := args[1] == "cancel" && code == 1 && strings.Contains(errOut, "had already ended")
		if code != 0 && !ended {
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
		case (args[1] == "status" || args[1] == "logs") && slices.Contains(args, "--artifact"):
			if out != "step 1 E = -1.0\nstep 2 E = -2.0\nstep 3 E = -3.0\nstep 4 E = -4.0\n" {
				t.Errorf("%s --artifact md.log: %q, want the job's md.log", args[1], out)
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

// restREADME runs the README's curl lines of the jobs' REST API against a labmate serve of
// the test's own, each as shown.
func restREADME(t *testing.T, st *readmeState, curls []readmeLine) {
	if len(curls) < 5 {
		t.Fatalf("the README shows %d curl commands of the jobs' REST API", len(curls))
	}
	_, url := serve(t, t.TempDir(), "--no-token")
	var id string
	for i, l := range curls {
		cmd := strings.ReplaceAll(l.text, "/ID", "/"+id)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		c := exec.CommandContext(ctx, "sh", "-c", cmd)
		c.Dir, c.Env = st.root, append(st.environ(), "URL="+url)
		var stderr strings.Builder
		c.Stderr = &stderr // curl's progress meter
		out, err := c.Output()
		cancel()
		t.Logf("%s: %v\n%s", l, err, out)
		if err != nil {
			t.Errorf("%s: %v\n%s%s", l, err, out, stderr.String())
			continue
		}
		if i == 0 {
			var v struct{ ID, Operation string }
			if json.Unmarshal(out, &v) != nil || v.ID == "" || v.Operation == "" {
				t.Fatalf("%s: want {\"id\", \"session\", \"operation\"}, got %s", l, out)
			}
			id = v.ID
		} else if !strings.Contains(string(out), id) && !strings.Contains(string(out), `"seq"`) {
			t.Errorf("%s: the answer names neither the job %s nor a log line:\n%s", l, id, out)
		}
	}
}
