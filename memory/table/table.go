// Package table prints memory for people as aligned tables: search results and entries,
// namespaces, the history of changes, what consolidation did, and synced skills. Every text is
// cut to one line of the column's width.
package table

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/labmate/labmate/memory"
	"github.com/labmate/labmate/memory/consolidate"
)

func newWriter(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// cut is s on one line, cut to n runes with "…".
func cut(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Results prints search results (scored: with rank and score, best first) or listed entries
// (with status and last update).
func Results(w io.Writer, res []*memory.Result, scored bool) error {
	tw := newWriter(w)
	if scored {
		fmt.Fprintln(tw, "RANK\tSCORE\tKIND\tNAMESPACE\tID\tTEXT")
	} else {
		fmt.Fprintln(tw, "KIND\tSTATUS\tNAMESPACE\tID\tUPDATED\tTEXT")
	}
	for _, r := range res {
		var (
			kind, ns, text string
			status         memory.Status
			updated        time.Time
		)
		if sk := r.Skill; sk != nil {
			kind, status, ns, text, updated = "skill", sk.Status, sk.Namespace, sk.Name+": "+sk.Description, sk.UpdatedAt
		} else {
			fa := r.Fact
			kind, status, ns, text, updated = string(fa.Kind), fa.Status, fa.Namespace, fa.Text, fa.UpdatedAt
		}
		if scored {
			fmt.Fprintf(tw, "%d\t%.3g\t%s\t%s\t%s\t%s\n", r.Rank, r.Score, kind, ns, r.ID(), cut(text, 80))
		} else {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", kind, status, ns, r.ID(), updated.Local().Format("2006-01-02 15:04"), cut(text, 70))
		}
	}
	return tw.Flush()
}

// Namespaces prints the namespaces with their counts and whether they are frozen.
func Namespaces(w io.Writer, nss []memory.Namespace) error {
	tw := newWriter(w)
	fmt.Fprintln(tw, "NAMESPACE\tFACTS\tSKILLS\tENTRIES\tFROZEN")
	for _, n := range nss {
		frozen := ""
		if n.Frozen {
			frozen = "frozen"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", n.Name, n.Facts, n.Skills, n.Entries, frozen)
	}
	return tw.Flush()
}

// History prints changes: old and new text, event, actor, time.
func History(w io.Writer, changes []*memory.Change) error {
	tw := newWriter(w)
	fmt.Fprintln(tw, "SEQ\tTIME\tEVENT\tACTOR\tNAMESPACE\tENTRY\tCHANGE")
	for _, c := range changes {
		change := cut(c.New, 50)
		switch {
		case c.Old != "" && c.New != "":
			change = cut(c.Old, 30) + " → " + cut(c.New, 30)
		case c.Old != "":
			change = cut(c.Old, 50)
		}
		if c.Reason != "" {
			change += " (" + cut(c.Reason, 40) + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", c.Seq, c.Time.Local().Format("2006-01-02 15:04:05"), c.Event, c.Actor, c.Namespace, c.EntryID, change)
	}
	return tw.Flush()
}

// Actions prints what consolidation did with each fact, and why.
func Actions(w io.Writer, actions []consolidate.Action) error {
	tw := newWriter(w)
	fmt.Fprintln(tw, "EVENT\tID\tTEXT\tREASON")
	for _, a := range actions {
		text := a.Text
		if text == "" {
			text = a.Old
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", a.Event, a.ID, cut(text, 60), cut(a.Reason, 50))
	}
	return tw.Flush()
}

// Skills prints skills with their version and counts.
func Skills(w io.Writer, skills []*memory.Skill) error {
	tw := newWriter(w)
	fmt.Fprintln(tw, "SKILL\tVERSION\tUSES\tSUCCESSES\tID")
	for _, sk := range skills {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\n", sk.Name, sk.Version, sk.Uses, sk.Successes, sk.ID)
	}
	return tw.Flush()
}
