package main

import (
	"slices"
	"strings"
	"testing"
)

// TestTypoEverywhere walks the tree: under every group (and every command that has
// subcommands), each subcommand mistyped, and a word that is none, exit 2 with a message that
// names the group's commands, and a suggestion for the typo; nothing runs. Unknown flags
// get the nearest flag as a suggestion.
func TestTypoEverywhere(t *testing.T) {
	dir := t.TempDir()
	env := append(modelEnv(t), "XDG_DATA_HOME="+dir)
	checked := 0
	for path, c := range commands(t) {
		if !c.HasSubCommands() {
			continue
		}
		words := strings.Fields(path)[1:]
		for _, sub := range subcommands(c) {
			typo := mistype(sub)
			if slices.Contains(subcommands(c), typo) {
				continue
			}
			args := append(slices.Clone(words), typo)
			out, errOut, code := labmateEnv(t, env, dir, "", args...)
			if code != 2 || out != "" || !strings.Contains(errOut, "did you mean "+path+" ") {
				t.Errorf("labmate %s: exit %d, stdout %q, stderr %q; want 2 and a suggestion", strings.Join(args, " "), code, out, errOut)
			}
			checked++
		}
		if c.Name() != "run" { // labmate run WORD is a task when no command is near it
			args := append(slices.Clone(words), "nosuch")
			if _, errOut, code := labmateEnv(t, env, dir, "", args...); code != 2 || !strings.Contains(errOut, "its commands: ") {
				t.Errorf("labmate %s: exit %d, stderr %q; want 2 and the commands", strings.Join(args, " "), code, errOut)
			}
		}
	}
	if checked < 40 {
		t.Errorf("only %d typos checked", checked)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"memory", "serch", "x"}, `unknown command "serch" for labmate memory: did you mean labmate memory search?`},
		{[]string{"job", "stats"}, "did you mean labmate job status?"},
		{[]string{"campaign", "rn"}, "did you mean labmate campaign run?"},
		{[]string{"lab", "simulat", "x.py"}, "did you mean labmate lab simulate?"},
		{[]string{"model", "chek"}, "did you mean labmate model check?"},
		{[]string{"eval", "nosuch"}, `unknown command "nosuch" for labmate eval (its commands: `},
		{[]string{"run", "lst"}, `"lst" is not a command of labmate run: did you mean labmate run list?`},
		{[]string{"docs", "search", "--lmit", "3", "x"}, "unknown flag --lmit for labmate docs search: did you mean --limit?"},
		{[]string{"nosuch"}, `unknown command "nosuch" for labmate (its commands: `},
	} {
		out, errOut, code := labmateEnv(t, env, dir, "", tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("labmate %q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// A task of several words is still a task: it gets as far as wanting a model.
	if _, errOut, code := labmateEnv(t, env, dir, "", "run", "list the primes below 100"); code != 2 || !strings.Contains(errOut, "model") || strings.Contains(errOut, "did you mean") {
		t.Errorf("run with a task: exit %d, %q", code, errOut)
	}
	// A group alone shows its help.
	if out, _, code := labmateEnv(t, env, dir, "", "memory"); code != 0 || !strings.Contains(out, "Available Commands") {
		t.Errorf("labmate memory: exit %d, %q", code, out)
	}
}

// mistype drops the last letter of a name, or swaps its first two of a short one.
func mistype(s string) string {
	if len(s) <= 3 {
		return s[1:2] + s[:1] + s[2:]
	}
	return s[:len(s)-1]
}
