package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// strict makes every command of the tree refuse what it does not know, once for all of them
// (the README's "CLI conventions"): an unknown subcommand of a group is an error naming the
// group's commands and the one it was probably meant to be; a one-word argument of a command
// that also has subcommands (labmate run lst) that is within two edits of one of them, or a
// prefix of one, is taken as that subcommand mistyped and refused, not as the command's
// argument (a task of labmate run is several words, quoted); an unknown flag is an error
// suggesting the flag meant; a number, size or duration that does not parse names the flag,
// the value and what is expected. main exits 2 on each.
func strict(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	walk(root, func(c *cobra.Command) {
		if !c.HasSubCommands() {
			// A wrong number of arguments says what the command takes.
			if own := c.Args; own != nil {
				c.Args = func(cmd *cobra.Command, args []string) error {
					if err := own(cmd, args); err != nil {
						return fmt.Errorf("%w (usage: %s)", err, cmd.UseLine())
					}
					return nil
				}
			}
			return
		}
		c.SuggestionsMinimumDistance = 2
		if !c.Runnable() {
			// A group: with no argument it shows its help; with one it is a mistake.
			c.Args = unknownSubcommand
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			return
		}
		own := c.Args
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 && args[0] != "" && !strings.ContainsAny(args[0], " \t\n") {
				if s := suggest(cmd, args[0]); s != "" {
					return fmt.Errorf("%q is not a command of %s: did you mean %s %s? (its commands are %s; a one-word argument this close to one is taken for a typo of it: a task is several words, in quotes)",
						args[0], cmd.CommandPath(), cmd.CommandPath(), s, strings.Join(subcommands(cmd), ", "))
				}
			}
			if own != nil {
				return own(cmd, args)
			}
			return nil
		}
	})
}

// walk calls fn on c and every command under it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		walk(s, fn)
	}
}

// subcommands are the names of the commands of c a user can call.
func subcommands(c *cobra.Command) []string {
	var names []string
	for _, s := range c.Commands() {
		if s.IsAvailableCommand() {
			names = append(names, s.Name())
		}
	}
	return names
}

// suggest is the command of cmd that word most likely meant: of those within two edits of it
// or starting with it (cobra's suggestions), the nearest; "" when none is.
func suggest(cmd *cobra.Command, word string) string {
	best, bestD := "", -1
	for _, s := range cmd.SuggestionsFor(word) {
		if d := editDistance(strings.ToLower(word), s); bestD < 0 || d < bestD {
			best, bestD = s, d
		}
	}
	return best
}

// unknownSubcommand refuses any argument of a group.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %s", args[0], cmd.CommandPath())
	if s := suggest(cmd, args[0]); s != "" {
		msg += fmt.Sprintf(": did you mean %s %s?", cmd.CommandPath(), s)
	}
	return fmt.Errorf("%s (its commands: %s; see %s --help)", msg, strings.Join(subcommands(cmd), ", "), cmd.CommandPath())
}

// flagError rewrites pflag's errors: an unknown flag gets the nearest flag of the command
// as a suggestion, a value a number, duration or boolean flag cannot parse says what was
// expected (not strconv's words).
func flagError(cmd *cobra.Command, err error) error {
	var notExist *pflag.NotExistError
	if errors.As(err, &notExist) {
		name := notExist.GetSpecifiedName()
		msg := err.Error()
		switch sh := notExist.GetSpecifiedShortnames(); {
		case sh != "":
			msg = fmt.Sprintf("unknown flag -%s (in -%s) for %s", name, sh, cmd.CommandPath())
		case name != "":
			msg = fmt.Sprintf("unknown flag --%s for %s", name, cmd.CommandPath())
			if s := nearestFlag(cmd, name); s != "" {
				msg += fmt.Sprintf(": did you mean --%s?", s)
			}
		}
		return fmt.Errorf("%s (see %s --help)", msg, cmd.CommandPath())
	}
	var invalid *pflag.InvalidValueError
	if errors.As(err, &invalid) {
		// pflag's own numbers, durations and booleans fail with strconv's or time's words; a
		// value of labmate's own (a size, a wall time) already says what it wants.
		var num *strconv.NumError
		f, cause := invalid.GetFlag(), errors.Unwrap(invalid)
		if want, ok := expected[f.Value.Type()]; ok && (errors.As(cause, &num) || strings.HasPrefix(fmt.Sprint(cause), "time: ")) {
			if num != nil && errors.Is(num.Err, strconv.ErrRange) {
				want += ", and in range"
			}
			return fmt.Errorf("--%s %q: want %s", f.Name, invalid.GetValue(), want)
		}
	}
	return err
}

// expected says, per pflag type, what a value must look like.
var expected = map[string]string{
	"int":      "a whole number, e.g. 10",
	"int8":     "a whole number, e.g. 10",
	"int16":    "a whole number, e.g. 10",
	"int32":    "a whole number, e.g. 10",
	"int64":    "a whole number, e.g. 200000",
	"uint":     "a whole number, 0 or more, e.g. 10",
	"uint8":    "a whole number, 0 or more, e.g. 10",
	"uint16":   "a whole number, 0 or more, e.g. 10",
	"uint32":   "a whole number, 0 or more, e.g. 10",
	"uint64":   "a whole number, 0 or more, e.g. 10",
	"float32":  "a number, e.g. 0.5",
	"float64":  "a number, e.g. 0.5",
	"duration": "a duration with its unit, e.g. 90s, 10m, 1h30m",
	"bool":     "true or false",
	"intSlice": "whole numbers separated by commas, e.g. 1,2,3",
}

// nearestFlag is the flag of cmd (its own or inherited) nearest to name, within two edits
// or with name as its prefix; "" when none is.
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", 3
	var names []string
	visit := func(f *pflag.Flag) {
		if f.Hidden || f.Deprecated != "" || slices.Contains(names, f.Name) {
			return
		}
		names = append(names, f.Name)
		d := editDistance(strings.ToLower(name), strings.ToLower(f.Name))
		if strings.HasPrefix(f.Name, name) && d > 1 {
			d = 1
		}
		if d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
