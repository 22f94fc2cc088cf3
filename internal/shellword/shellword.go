// Package shellword writes a string as one word of a POSIX shell's command line, for the
// commands labmate prints for people to copy (a job's command, how to get an artifact back).
package shellword

import "strings"

// Quote is s as one shell word: as it is when no character of it is special to a shell,
// else in single quotes.
func Quote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
