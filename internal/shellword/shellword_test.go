package shellword

import "testing"

func TestQuote(t *testing.T) {
	for in, want := range map[string]string{
		"fig.png":      "fig.png",
		"cli one":      "'cli one'",
		"it's":         `'it'\''s'`,
		"":             "''",
		"$HOME/a*.csv": "'$HOME/a*.csv'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}
