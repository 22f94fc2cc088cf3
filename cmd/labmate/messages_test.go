package main

import (
	"strings"
	"testing"
)

// TestMessages: errors a user meets say what happened in the user's words, not in the
// internals' (an option struct's field, a doubled prefix, a repeated dial error, a chat model
// offered as an embedder).
func TestMessages(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "stop.py", "raise KeyboardInterrupt\n")
	write(t, dir, "x.py", "print(1)\n")
	noWeb := []string{"SEARXNG_URL=", "BRAVE_API_KEY=", "TAVILY_API_KEY=", "LABMATE_PAPERS=", "ARXIV_URL=", "CROSSREF_URL="}
	for _, tc := range []struct {
		name    string
		env     []string
		args    []string
		code    int
		want    string
		notWant string
	}{
		{"a private address", []string{"LABMATE_FETCH=1", "LABMATE_FETCH_PRIVATE=", "LABMATE_FETCH_ALLOW="}, []string{"docs", "fetch", "http://127.0.0.1:9/"}, 2,
			"labmate: fetch_url failed: fetch http://127.0.0.1:9/: refusing a private address: 127.0.0.1 is in 127.0.0.0/8, loopback (RFC 1122) " +
				"(LABMATE_FETCH_ALLOW=CIDR allows a range, LABMATE_FETCH_PRIVATE=1 all of them)\n", "dial tcp"},
		{"no web provider", noWeb, []string{"docs", "web", "stiff"}, 2,
			"labmate: search_web: not configured: set SEARXNG_URL, BRAVE_API_KEY or TAVILY_API_KEY to enable web search (without it, no web results can be given)\n", "plan without it"},
		{"no paper provider", noWeb, []string{"docs", "papers", "stiff"}, 2,
			"to enable literature search (without it, no papers can be given)\n", "plan without it"},
		{"a fact kind", []string{"LABMATE_MEMORY=" + dir + "/m.db"}, []string{"memory", "add", "--kind", "bogus", "ode45 diverges"}, 2,
			`labmate: memory: invalid entry: a fact cannot be of kind "bogus": the kinds are observation, warning, boundary, parameter, reference` + "\n", `fact ""`},
		{"an interrupted cell", nil, []string{"exec", "stop.py"}, 130,
			": the cell was stopped before it finished; the workspace is kept\n", "interrupted; the workspace"},
		{"a bad watch", nil, []string{"exec", "--watch", "x <", "x.py"}, 2,
			`watch "x <": expected a number after "<" at column 4`, "watch: watch"},
		{"PostgreSQL down", nil, []string{"memory", "--store", "postgres://user@127.0.0.1:1/db", "list"}, 2,
			"labmate: memory/postgres: cannot connect to postgres://user@127.0.0.1:1/db: connect: connection refused (is PostgreSQL running there?)\n", "dial error"},
		{"no embedder", modelEnv(t), []string{"model", "check", "--embedder"}, 1,
			"no embedder configured: pass --embedder PROVIDER:MODEL (e.g. --embedder ollama:nomic-embed-text or --embedder openai:text-embedding-3-small)", "qwen3"},
	} {
		out, errOut, code := labmateEnv(t, tc.env, dir, "", tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, tc.notWant) {
			t.Errorf("%s: labmate %q: exit %d, stdout %q, stderr %q; want exit %d and %q without %q", tc.name, tc.args, code, out, errOut, tc.code, tc.want, tc.notWant)
		}
	}
}
