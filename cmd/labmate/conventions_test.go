package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commands are every command of labmate's tree, by path ("labmate memory search").
func commands(t *testing.T) map[string]*cobra.Command {
	t.Helper()
	all := map[string]*cobra.Command{}
	walk(newRoot(), func(c *cobra.Command) {
		if !c.Hidden && c.Name() != "help" {
			all[c.CommandPath()] = c
		}
	})
	if len(all) < 40 {
		t.Fatalf("the tree has %d commands", len(all))
	}
	return all
}

// flagsOf are a command's flags, its own and those it inherits, but help and the deprecated
// spellings kept as aliases.
func flagsOf(c *cobra.Command) []*pflag.Flag {
	var fs []*pflag.Flag
	seen := map[string]bool{}
	visit := func(f *pflag.Flag) {
		if f.Name != "help" && f.Deprecated == "" && !seen[f.Name] {
			seen[f.Name] = true
			fs = append(fs, f)
		}
	}
	c.NonInheritedFlags().VisitAll(visit)
	c.InheritedFlags().VisitAll(visit)
	return fs
}

// meanings say, for the flag names the README's "CLI conventions" define, what their help
// must say and of which type they are, wherever they appear.
var meanings = map[string]struct {
	typ   string
	usage string // a regular expression the usage matches
}{
	"budget":       {"int64", `tokens`},
	"turns":        {"int", `turns`},
	"model":        {"string", `model`},
	"kernel":       {"string", `python`},
	"workspace":    {"string", `director|workspace`},
	"out":          {"string", `folder|director`},
	"json":         {"bool", `JSON|NDJSON`},
	"limit":        {"int", `.`},
	"namespace":    {"string", `namespace`},
	"mem-limit":    {"size", `memory`},
	"dataset":      {"string", `.`},
	"data":         {"string", `data director`},
	"store":        {"string", `.`},
	"memory-store": {"string", `memory`},
	"timeout":      {"duration", `wall`},
	"artifact":     {"string", `artifact .*DATA/artifacts`},
}

// twoTypes are the flag names of two types, and why they still mean one thing.
var twoTypes = map[string]string{
	"follow": "job logs -f follows the job's log as tail -f does; exec and job submit --follow FILE follow a file into the log",
}

// shorthands are the one-letter flags: each means one long flag everywhere.
var shorthands = map[string]string{"m": "model", "k": "kernel", "n": "namespace", "o": "out", "f": "follow"}

// shortOf is the one-letter flag of the long flag name, or "".
func shortOf(name string) string {
	for short, long := range shorthands {
		if long == name {
			return short
		}
	}
	return ""
}

// TestConventionsFlags walks every command's flags: a flag name has one type and one meaning
// (its help says what the conventions say), a one-letter flag is the same long flag
// everywhere, and no flag's help sends the user to the source (go doc).
func TestConventionsFlags(t *testing.T) {
	types := map[string]map[string][]string{} // name → type → commands
	for path, c := range commands(t) {
		for _, f := range flagsOf(c) {
			typ := strings.TrimSuffix(strings.TrimSuffix(f.Value.Type(), "Slice"), "Array") // a list of the same
			if types[f.Name] == nil {
				types[f.Name] = map[string][]string{}
			}
			types[f.Name][typ] = append(types[f.Name][typ], path)
			if m, ok := meanings[f.Name]; ok {
				if typ != m.typ || !regexp.MustCompile(m.usage).MatchString(f.Usage) {
					t.Errorf("%s --%s (%s, %q): the conventions say --%s is a %s whose help says /%s/", path, f.Name, typ, f.Usage, f.Name, m.typ, m.usage)
				}
			}
			if short := shortOf(f.Name); short != "" && f.Name != "follow" && f.Shorthand != short {
				t.Errorf("%s: --%s has no -%s, which it has elsewhere", path, f.Name, short)
			}
			if f.Shorthand != "" && f.ShorthandDeprecated == "" && shorthands[f.Shorthand] != f.Name {
				t.Errorf("%s: -%s is --%s here, but -%s means --%s", path, f.Shorthand, f.Name, f.Shorthand, shorthands[f.Shorthand])
			}
			if strings.Contains(f.Usage, "go doc") {
				t.Errorf("%s --%s sends the user to go doc: %q", path, f.Name, f.Usage)
			}
		}
		if strings.Contains(c.Long+c.Short+c.Example, "go doc") {
			t.Errorf("%s --help sends the user to go doc", path)
		}
	}
	for name, byType := range types {
		if _, ok := twoTypes[name]; !ok && len(byType) > 1 {
			t.Errorf("--%s has %d types: %v", name, len(byType), byType)
		}
	}
	// A one-letter long name (--k) would read as the shorthand of another flag.
	for name := range types {
		if len(name) == 1 && name != "k" { // eval --k: pass@k's k, kept as the benchmarks write it
			t.Errorf("--%s: a one-letter long flag", name)
		}
	}
}

// noJSON are the runnable commands without --json, and why.
var noJSON = map[string]string{
	"labmate serve": "a server: it prints its address, then serves until stopped",
	"labmate mcp":   "an MCP server on stdio: its stdout is the protocol",
}

// TestConventionsJSON: every command that prints a result has --json; the exceptions are
// named with their reason.
func TestConventionsJSON(t *testing.T) {
	for path, c := range commands(t) {
		if !c.Runnable() || c.HasSubCommands() && c.Name() != "run" || strings.HasPrefix(path, "labmate completion ") { // a shell script
			continue
		}
		has := c.Flags().Lookup("json") != nil || c.InheritedFlags().Lookup("json") != nil
		why, exempt := noJSON[path]
		switch {
		case !has && !exempt:
			t.Errorf("%s prints a result but has no --json", path)
		case has && exempt:
			t.Errorf("%s has --json, yet noJSON says %q", path, why)
		}
	}
}

// TestConventionsNumbers: every number, duration and boolean flag of the tree, given a value
// it cannot parse, is refused naming the flag, the value and what was expected (not
// strconv's or time's words).
func TestConventionsNumbers(t *testing.T) {
	n := 0
	for path, c := range commands(t) {
		for _, f := range flagsOf(c) {
			want, ok := expected[f.Value.Type()]
			if !ok {
				continue
			}
			n++
			err := c.ParseFlags([]string{"--" + f.Name + "=abc"})
			if err == nil {
				t.Errorf("%s --%s=abc: no error", path, f.Name)
				continue
			}
			err = c.FlagErrorFunc()(c, err)
			msg := err.Error()
			// pflag's own values get flagError's words; labmate's (a wall time) their own.
			if !strings.HasPrefix(msg, "invalid argument") && msg != fmt.Sprintf("--%s %q: want %s", f.Name, "abc", want) {
				t.Errorf("%s --%s=abc: %q", path, f.Name, msg)
			}
			if !strings.Contains(msg, "--"+f.Name) || !strings.Contains(msg, `"abc"`) || !strings.Contains(msg, "want") ||
				strings.Contains(msg, "strconv") || strings.Contains(msg, "time: ") {
				t.Errorf("%s --%s=abc: %q", path, f.Name, msg)
			}
		}
	}
	if n < 30 {
		t.Errorf("only %d number flags in the tree", n)
	}
	// Through the binary: no strconv, exit 2, nothing run.
	for _, args := range [][]string{
		{"run", "--budget", "abc", "a task of several words"},
		{"campaign", "run", "--turns", "x"},
		{"eval", "engdesign", "--limit", "five"},
		{"run", "--timeout", "10", "a task of several words"},
	} {
		out, errOut, code := labmateEnv(t, modelEnv(t), t.TempDir(), "", args...)
		if code != 2 || out != "" || strings.Contains(errOut, "strconv") || strings.Contains(errOut, "time: ") || !strings.Contains(errOut, ": want ") {
			t.Errorf("labmate %q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
}
