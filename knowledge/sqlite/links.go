package sqlite

import (
	"context"
	"database/sql"
	"strings"
)

// countLinks recounts, for every named section, how many documents list it under "See also"
// (Octave, MATLAB and numpy documentation all cross-reference this way). A function many others
// point to is usually the one a question means; the count is a small prior in ranking.
func countLinks(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT source, group_concat(text, char(10)) FROM chunks
		WHERE text LIKE '%see also%' GROUP BY source`)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for rows.Next() {
		var src, text string
		if err := rows.Scan(&src, &text); err != nil {
			rows.Close()
			return err
		}
		seen := map[string]bool{}
		for _, name := range SeeAlso(text) {
			if !seen[name] {
				seen[name] = true
				counts[name]++
			}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE chunks SET inlinks = 0 WHERE inlinks != 0"); err != nil {
		return err
	}
	up, err := tx.PrepareContext(ctx, "UPDATE chunks SET inlinks = ? WHERE name = ?")
	if err != nil {
		return err
	}
	defer up.Close()
	for name, n := range counts {
		if _, err := up.ExecContext(ctx, n, name); err != nil {
			return err
		}
	}
	return nil
}

// SeeAlso returns the names listed after each "See also" in text, up to the end of its paragraph.
func SeeAlso(text string) []string {
	var out []string
	for {
		i := strings.Index(strings.ToLower(text), "see also")
		if i < 0 {
			return out
		}
		text = text[i+len("see also"):]
		list := text
		if j := strings.Index(list, "\n\n"); j >= 0 {
			list = list[:j]
		}
		var names []string
		for _, line := range strings.Split(list, "\n") {
			// numpy style: "name : what it does" on its own line, under a "--------" rule.
			if name, _, ok := strings.Cut(line, " : "); ok {
				line = name
			}
			names = append(names, line)
		}
		for _, f := range strings.FieldsFunc(strings.Join(names, ","), func(r rune) bool {
			return r == ',' || r == ':' || r == ' ' || r == '\t'
		}) {
			if f = strings.Trim(f, ".;`'\"()[]-"); f != "" {
				out = append(out, f)
			}
		}
	}
}
