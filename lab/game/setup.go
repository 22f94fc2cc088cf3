package game

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/labmate/labmate/lab"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/dataset"
)

// Spec asks for a campaign on a fully mapped dataset (a CSV, one row per experiment):
// a planner plays one group of it for Budget turns. The CSV is uploaded (CSVData, at most
// dataset.DefaultLimits.Bytes) or named by a path on the server, which Setup accepts
// only under its data roots (labmate serve --data-root). Either way the table is
// bounded by dataset.DefaultLimits, and Budget by the space's size and the planner.
// Objective and Budget left out take the defaults of labmate campaign run (SetDefaults).
type Spec struct {
	CSV       string   `json:"csv,omitempty" jsonschema:"path of the dataset CSV on the server, under one of its data roots (--data-root); relative paths are taken from each root in turn"`
	CSVData   string   `json:"csv_data,omitempty" jsonschema:"or the CSV itself (at most 16 MiB)"`
	Name      string   `json:"name,omitempty" jsonschema:"the file name of csv_data, which names the dataset"`
	Objective string   `json:"objective,omitempty" jsonschema:"the measured column to maximise (default yield)"`
	Vars      []string `json:"vars" jsonschema:"the condition columns the planner chooses, e.g. ligand, base"`
	Groups    []string `json:"groups,omitempty" jsonschema:"the columns that split the table into separate campaigns (e.g. the substrate)"`
	Group     string   `json:"group,omitempty" jsonschema:"which group to play: its values joined with ' / ' (default: the first)"`
	Planner   string   `json:"planner,omitempty" jsonschema:"random, bayes or bayes-onehot (default bayes)"`
	Budget    int      `json:"budget,omitempty" jsonschema:"how many turns: at most 1000 and the space's conditions (200 for bayes); default 20, or the space's conditions when fewer"`
	Seed      int64    `json:"seed,omitempty"`
	Bench     bool     `json:"bench,omitempty" jsonschema:"run each experiment as a protocol on the bench twin's heater-shaker plate rather than looking it up (the Suzuki and Buchwald–Hartwig datasets: suzuki_perera2018, buchwald_hartwig_ahneman2018)"`
}

// The defaults of a campaign, the same for every face of labmate: the flags of labmate
// campaign run, the MCP campaign_start tool, POST /v1/campaigns and the dashboard's form.
const (
	DefaultObjective = "yield"
	DefaultBudget    = 20
)

// SetDefaults fills in what s leaves out: Objective with DefaultObjective and, once the
// space's size is known (space > 0), Budget with DefaultBudget or the space's conditions when
// there are fewer. A server calls it before the setup (space 0: Budget stays 0, which the
// setup accepts) and again with the size of the space the setup made.
func (s *Spec) SetDefaults(space int) {
	if s.Objective == "" {
		s.Objective = DefaultObjective
	}
	if s.Budget == 0 && space > 0 {
		s.Budget = min(DefaultBudget, space)
	}
}

// notUnderRoot is the refusal of a csv path outside the data roots.
type notUnderRoot struct {
	path string
	none bool // the server has no data root
}

func (e *notUnderRoot) Error() string {
	s := fmt.Sprintf("campaign: csv path %q is not under a data root (--data-root)", e.path)
	if e.none {
		s += "; this server has none: upload the CSV (csv_data) instead"
	}
	return s
}

func (e *notUnderRoot) Unwrap() error { return dataset.ErrNotUnderRoot }

// Setup is a campaign ready to play: the group, the instrument that measures it (the group as
// the lookup lab, or the bench), its planner, and the campaign.
type Setup struct {
	Group      *dataset.Group
	Instrument lab.Instrument
	Planner    lab.Planner
	Campaign   *lab.Campaign
}

// NewSetup sets campaigns up for a server (the dashboard's campaign page, the MCP campaign
// tools): a dataset group as the lookup lab and a random or Bayesian planner (bayes describes
// each level by the other groups' data, as Game does). A CSV comes uploaded (spec.CSVData:
// errors may quote it, the client sent it) or by a path under roots (errors quote nothing of
// the file: see dataset.Roots). Everything is bounded before it is built: the table by
// dataset.DefaultLimits, the budget by the group's space and, for bayes, by
// bayes.MaxMeasurements.
func NewSetup(roots *dataset.Roots, spec *Spec) (*Setup, error) {
	name := spec.Planner
	if name == "" {
		name = "bayes"
	}
	if name == "llm" || KnownPlanner(name) != nil {
		return nil, fmt.Errorf("campaign: planner %q: choose random, bayes or bayes-onehot (the llm planner runs with labmate campaign run --planner llm)", name)
	}
	if err := CheckBudget(name, spec.Budget); err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	file := spec.CSV
	var read func(o *dataset.Options) (*dataset.Table, error)
	switch {
	case spec.CSV != "" && spec.CSVData != "":
		return nil, errors.New("campaign: give csv (a path) or csv_data, not both")
	case spec.CSVData != "":
		file = "csv_data"
		if spec.Name != "" {
			file = filepath.Base(spec.Name)
		}
		read = func(o *dataset.Options) (*dataset.Table, error) {
			return dataset.Read(strings.NewReader(spec.CSVData), file, o)
		}
	case spec.CSV != "":
		read = func(o *dataset.Options) (*dataset.Table, error) {
			t, err := roots.Open(spec.CSV, o)
			if errors.Is(err, dataset.ErrNotUnderRoot) {
				return nil, &notUnderRoot{path: spec.CSV, none: len(roots.Dirs()) == 0}
			}
			return t, err
		}
	default:
		return nil, errors.New("campaign: give csv (a path under a data root of the server) or csv_data (the CSV itself)")
	}
	t, err := read(&dataset.Options{Objective: spec.Objective, Vars: spec.Vars, Groups: spec.Groups})
	if err != nil {
		return nil, err
	}
	g := t.Groups[0]
	if spec.Group != "" {
		if g, err = t.Group(spec.Group); err != nil {
			return nil, err
		}
	}
	if n := g.Space().Size(); spec.Budget > n {
		return nil, fmt.Errorf("campaign: budget %d: the group's space has only %d conditions", spec.Budget, n)
	}
	var desc [][][]float64
	if name == "bayes" {
		desc = t.Descriptors(g.Key) // levels described by the other groups' data only
	}
	p, err := NewPlanner(name, g.Space(), spec.Seed, nil, desc, nil)
	if err != nil {
		return nil, err
	}
	var inst lab.Instrument = g
	if spec.Bench {
		if inst, err = setupBench(spec, file, t, g, read); err != nil {
			return nil, err
		}
	}
	c := &lab.Campaign{ID: NewCampaignID(), Space: t.Name, Objective: t.Objective, Group: g.Key, Planner: name, Seed: spec.Seed, Bench: spec.Bench}
	return &Setup{Group: g, Instrument: inst, Planner: p, Campaign: c}, nil
}

// setupBench is group g of table t (read by read, named file) on the bench. What the mapping
// finds wrong in a file read by path is not quoted, as dataset.Roots quotes nothing of it: the
// server is no file-reading oracle.
func setupBench(spec *Spec, file string, t *dataset.Table, g *dataset.Group, read func(*dataset.Options) (*dataset.Table, error)) (lab.Instrument, error) {
	rs, err := bench.SpecOf(t.Name)
	if err != nil {
		return nil, fmt.Errorf("campaign: %w", err)
	}
	var readErr error
	rx, err := bench.ReadReaction(file, rs, func(o *dataset.Options) (*dataset.Table, error) {
		t, err := read(o)
		readErr = err
		return t, err
	})
	var inst lab.Instrument
	if err == nil {
		inst, err = onBench(rx, g, nil)
	}
	switch {
	case err == nil:
		return inst, nil
	case spec.CSV != "" && readErr == nil:
		return nil, fmt.Errorf("campaign: bench: %s does not map onto the bench's reaction of %s: every row must name its reactants, each set of reactants give one product, and the conditions be some of the reaction's components", spec.CSV, t.Name)
	}
	return nil, fmt.Errorf("campaign: %w", err)
}
