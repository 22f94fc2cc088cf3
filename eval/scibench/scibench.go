// Package scibench is SciBench's textbook set (shared/benchmarks/scibench: ten textbooks, 580
// problems) as an eval.Benchmark, with SciBench's own zero-shot prompt and scoring
// (mandyyyyii/scibench at e14e0ca, eval/eval_zero.py and eval/post_process.py).
//
// # Prompt
//
// An item's Goal is the system prompt sys_cal_box2 of eval/prompt/prompt_scai.py, verbatim, then
// eval_zero.py's user message: "Q: " + problem_text + " The unit of the answer is " + unit +
// ".\nA: The answer is", with problem_text and unit as the file holds them. When the unit holds a
// scale 10^{k}, the unit shown is what follows the scale (upstream remove_not), so the model
// answers in the unscaled unit, and the reference becomes answer_number × 10^k (cal_not); 76
// problems are so scaled. As upstream, a unit that is only a scale ("$10^{42}$", 14 problems) is
// shown whole and its reference stays answer_number, while "$10^6$ " (with a space: 2 thermo
// problems) is scaled and shows a blank unit, and the unit shown keeps upstream's leftovers
// (calculus 8.4.15 shows "} \mathrm{~cm}^3/\mathrm{s}$"). The *_sol.json worked examples and the
// solution fields (in fund.json mostly the answer) are never shown.
//
// # Scoring
//
// Grade does what eval_zero.py's equiv does. It takes the answer's last \boxed{...} (braces
// balanced; what follows its last "=", if any); for a scaled unit it expands "a \times 10^{k}"
// (or "a * 10^{k}"); it removes commas and reads the number as Python's float() does, or else
// its first whitespace-separated token; and the answer passes, score 100, iff
// math.isclose(answer, reference, rel_tol=0.05): |a−b| ≤ 0.05·max(|a|,|b|), so a reference of 0
// needs exactly 0. A reference is answer_number with commas removed and the Unicode minus read
// as "-" (upstream can never match the four diff.json answers that need it); as upstream, an
// answer's own Unicode minus is not read.
//
// # Sets
//
// "full" is all 580 problems. "107", the default, stands in for EmbodiedAct's SciBench-107,
// whose list is not public and whose paper we could not read for its per-textbook counts: 107
// problems split over the textbooks in proportion to their sizes (largest remainder, ties to
// the earlier textbook), which gives atkins 20, calculus 8, chemmc 7, class 10, diff 9, fund 13,
// matter 9, quan 6, stat 13, thermo 12. Within a textbook the chosen problems are those whose
// item IDs have the smallest SHA-256 (hex); answers play no part. Items come in textbook order,
// then file order.
package scibench

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labmate/labmate/eval"
)

// Textbooks are the ten textbook keys, in upstream's order; each has dir/<key>.json.
var Textbooks = []string{"atkins", "calculus", "chemmc", "class", "diff", "fund", "matter", "quan", "stat", "thermo"}

// SubsetSize is the size of the default set, "107".
const SubsetSize = 107

// systemPrompt is sys_cal_box2 of eval/prompt/prompt_scai.py (its Python "\\boxed" is \boxed).
const systemPrompt = `Please provide a clear and step-by-step solution for a scientific problem in the categories of Chemistry, Physics, or Mathematics. The problem will specify the unit of measurement, which should not be included in the answer. Express the final answer as a decimal number with three digits after the decimal point. Conclude the answer by stating "The answer is therefore \boxed{[ANSWER]}."`

// record is one problem as a textbook file holds it (every value a string).
type record struct {
	ProblemText  string `json:"problem_text"`
	AnswerNumber string `json:"answer_number"`
	Unit         string `json:"unit"`
	ProblemID    string `json:"problemid"`
}

// problem is one item with what grading it needs.
type problem struct {
	item      eval.Item
	scaled    bool    // the unit held a scale that the unit shown leaves out
	reference float64 // in the unit shown
}

// Benchmark is SciBench's textbook set as an eval.Benchmark.
type Benchmark struct {
	problems []*problem // textbook order, then file order
	byID     map[string]*problem
	subset   []*problem
}

var _ eval.Benchmark = (*Benchmark)(nil)

// scale is upstream remove_not's pattern: a 10^{k} with its dollar signs and spaces.
var scale = regexp.MustCompile(`\$? *10\^\{? *-?[0-9]+ *\}? *\$?`)

// New loads the ten textbooks of dir (the folder with atkins.json … thermo.json).
func New(dir string) (*Benchmark, error) {
	b := &Benchmark{byID: map[string]*problem{}}
	for _, book := range Textbooks {
		path := filepath.Join(dir, book+".json")
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("scibench: %w", err)
		}
		var recs []record
		if err := json.Unmarshal(data, &recs); err != nil {
			return nil, fmt.Errorf("scibench: %s: %w", path, err)
		}
		if len(recs) == 0 {
			return nil, fmt.Errorf("scibench: %s holds no problems", path)
		}
		for i, r := range recs {
			p, err := newProblem(book, r)
			if err != nil {
				return nil, fmt.Errorf("scibench: %s, problem %d (problemid %q): %w", path, i, r.ProblemID, err)
			}
			// A textbook can repeat a problem id (quan 2.13, stat 5.8-5, stat Problem 1.1.1): the
			// later ones get #2, #3, … in file order.
			for n, id := 2, p.item.ID; b.byID[p.item.ID] != nil; n++ {
				p.item.ID = id + "#" + strconv.Itoa(n)
			}
			b.byID[p.item.ID] = p
			b.problems = append(b.problems, p)
		}
	}
	b.subset = choose(b.problems, SubsetSize)
	return b, nil
}

func newProblem(book string, r record) (*problem, error) {
	id := strings.TrimSpace(r.ProblemID)
	if id == "" || strings.TrimSpace(r.ProblemText) == "" {
		return nil, errors.New("a problem needs problemid and problem_text")
	}
	norm := strings.NewReplacer(",", "", "−", "-").Replace(r.AnswerNumber)
	ref, err := pyFloat(strings.TrimSpace(norm))
	if err != nil {
		return nil, fmt.Errorf("answer_number %q: %w", r.AnswerNumber, err)
	}
	unit, scaled := r.Unit, false
	if scale.MatchString(r.Unit) {
		parts := scale.Split(r.Unit, -1)
		if rest := parts[len(parts)-1]; rest != "" {
			k, err := exponent(r.Unit)
			if err != nil {
				return nil, fmt.Errorf("unit %q: %w", r.Unit, err)
			}
			unit, scaled, ref = rest, true, ref*math.Pow(10, k)
			if math.IsInf(ref, 0) {
				return nil, fmt.Errorf("unit %q: answer_number %q × 10^%g overflows", r.Unit, r.AnswerNumber, k)
			}
		}
	}
	goal := systemPrompt + "\n\nQ: " + r.ProblemText + " The unit of the answer is " + unit + ".\nA: The answer is"
	return &problem{
		item:      eval.Item{ID: book + "/" + id, Group: book, Goal: goal, Kernel: "python"},
		scaled:    scaled,
		reference: ref,
	}, nil
}

// choose picks n of problems, split over the textbooks by largest remainder, and within a
// textbook by the smallest SHA-256 of the item ID; it keeps their order.
func choose(problems []*problem, n int) []*problem {
	byBook := map[string][]*problem{}
	for _, p := range problems {
		byBook[p.item.Group] = append(byBook[p.item.Group], p)
	}
	counts := make([]int, len(Textbooks))
	rems := make([]int, len(Textbooks))
	left := n
	for i, book := range Textbooks {
		q := n * len(byBook[book])
		counts[i], rems[i] = q/len(problems), q%len(problems)
		left -= counts[i]
	}
	order := make([]int, len(Textbooks))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rems[b], rems[a]) })
	for _, i := range order[:left] {
		counts[i]++
	}
	chosen := map[*problem]bool{}
	for i, book := range Textbooks {
		ps := slices.Clone(byBook[book])
		slices.SortFunc(ps, func(a, b *problem) int { return strings.Compare(digest(a.item.ID), digest(b.item.ID)) })
		for _, p := range ps[:counts[i]] {
			chosen[p] = true
		}
	}
	var subset []*problem
	for _, p := range problems {
		if chosen[p] {
			subset = append(subset, p)
		}
	}
	return subset
}

func digest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// Name implements eval.Benchmark.
func (b *Benchmark) Name() string { return "scibench" }

// Items implements eval.Benchmark: "" and "107" are the 107-problem subset, "full" all 580.
func (b *Benchmark) Items(set string) ([]eval.Item, error) {
	var ps []*problem
	switch set {
	case "", "107":
		ps = b.subset
	case "full":
		ps = b.problems
	default:
		return nil, fmt.Errorf(`scibench: unknown set %q (the sets are "107", the default, and "full")`, set)
	}
	items := make([]eval.Item, len(ps))
	for i, p := range ps {
		items[i] = p.item
	}
	return items, nil
}

// Reference is the reference answer of the item id, in the unit its Goal shows. It is for
// oracle tests; it never reaches an agent.
func (b *Benchmark) Reference(id string) (float64, error) {
	p := b.byID[id]
	if p == nil {
		return 0, fmt.Errorf("scibench: unknown item %q", id)
	}
	return p.reference, nil
}

// Grade implements eval.Benchmark with SciBench's scoring (see the package doc): 100 and passed
// when the answer's number is within 5 % of the reference, else 0. Details hold the boxed text
// ("boxed"), the number read ("answer") and the reference ("reference"), and, for an answer that
// could not be read, why ("error").
func (b *Benchmark) Grade(ctx context.Context, it eval.Item, answer string) (*eval.Grade, error) {
	p := b.byID[it.ID]
	if p == nil {
		return nil, fmt.Errorf("scibench: unknown item %q", it.ID)
	}
	return grade(answer, p.scaled, p.reference), nil
}
