package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEBlocks: every command the README shows is in a ```sh block, where TestREADME
// runs it: no other block (output, JSON, YAML) holds a line that is a labmate, curl or make
// command.
func TestREADMEBlocks(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range newRoot().Commands() {
		names = append(names, c.Name())
	}
	command := regexp.MustCompile(`^\s*(\$ )?((bin/)?labmate (` + strings.Join(names, "|") + `)\b|(curl|make|go) )`)
	fence, sh, blocks := "", 0, 0
	for i, s := range strings.Split(string(b), "\n") {
		switch {
		case fence == "" && strings.HasPrefix(s, "```"):
			fence, blocks = s, blocks+1
			if s == "```sh" {
				sh++
			}
		case fence != "" && s == "```":
			fence = ""
		case fence != "" && fence != "```sh" && command.MatchString(s):
			t.Errorf("README.md:%d: a command in a %q block, which TestREADME does not run: %s", i+1, fence, s)
		}
	}
	if fence != "" || sh < 10 || blocks <= sh {
		t.Fatalf("README: %d blocks, %d of them sh, one left open: %v", blocks, sh, fence != "")
	}
}
