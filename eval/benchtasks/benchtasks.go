// Package benchtasks is Coscientist's four bench tasks (Boiko et al., Nature 2023) as an eval
// benchmark on labmate's bench twin: colour every other row of a plate, draw a shape with a
// dye, identify three unknown dyes from their spectra, and run an 8-condition Suzuki screen on
// the heater-shaker and name its best conditions. The agent's cells drive the twin through the
// Opentrons protocol API (labmate.bench()); each trial's bench is set up in its workspace before
// the agent's code runs (eval.WorkspaceBenchmark), and the graders replay its journal and read
// the twin's final state, and the answer where the task asks a question.
package benchtasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/labmate/labmate/eval"
	"github.com/labmate/labmate/lab/bench"
	"github.com/labmate/labmate/lab/benchrun"
)

// SuzukiFile is the Suzuki–Miyaura dataset in the benchmark's data folder (shared
// data/reactions).
const SuzukiFile = "suzuki_perera2018.csv"

// Benchmark is the four bench tasks. It is safe for concurrent trials.
type Benchmark struct {
	equip *bench.Equipment
	tasks []*task
}

// task is one bench task: its item, how its bench is set up and how it is graded.
type task struct {
	item  eval.Item
	setup []bench.Command
	grade func(d *bench.Deck, answer string) *eval.Grade
}

// New opens the benchmark with the Suzuki dataset of dir (the shared data/reactions folder).
func New(dir string) (*Benchmark, error) {
	rx, err := bench.LoadReaction(filepath.Join(dir, SuzukiFile), &bench.Suzuki)
	if err != nil {
		return nil, fmt.Errorf("benchtasks: %w", err)
	}
	b := &Benchmark{equip: &bench.Equipment{
		Reactions:    []*bench.Reaction{rx},
		HeaterShaker: &bench.HeaterShakerOptions{YieldNoise: 1, Seed: 1},
		Reader:       &bench.ReaderOptions{Noise: 0.003, Seed: 1},
		Calibration:  calibration,
		Analyzer:     &bench.AnalyzerOptions{Noise: 0.005, Seed: 1},
	}}
	screen, err := newScreen(b.equip)
	if err != nil {
		return nil, err
	}
	b.tasks = []*task{colourRows(), drawShape(), identifyDyes(), screen}
	return b, nil
}

// Name is "bench".
func (b *Benchmark) Name() string { return "bench" }

// Items returns the four tasks; the benchmark has one set, "".
func (b *Benchmark) Items(set string) ([]eval.Item, error) {
	if set != "" {
		return nil, fmt.Errorf("benchtasks: no set %q (the benchmark has one set, the default)", set)
	}
	out := make([]eval.Item, len(b.tasks))
	for i, t := range b.tasks {
		out[i] = t.item
	}
	return out, nil
}

func (b *Benchmark) task(id string) (*task, error) {
	for _, t := range b.tasks {
		if t.item.ID == id {
			return t, nil
		}
	}
	return nil, fmt.Errorf("benchtasks: no task %q", id)
}

// deck is a fresh deck with the benchmark's equipment.
func (b *Benchmark) deck() (*bench.Deck, error) {
	d := bench.NewDeck()
	if err := d.Equip(b.equip); err != nil {
		return nil, fmt.Errorf("benchtasks: %w", err)
	}
	return d, nil
}

// Prepare sets up the task's bench in workspace and serves it on WORKSPACE/.labmate/bench.sock
// until release, journaling every command carried out (the setup's first) to
// WORKSPACE/.labmate/bench.jsonl.
func (b *Benchmark) Prepare(ctx context.Context, it eval.Item, workspace string) (release func(), err error) {
	t, err := b.task(it.ID)
	if err != nil {
		return nil, err
	}
	d, err := b.deck()
	if err != nil {
		return nil, err
	}
	// The setup is the journal's first lines, so that grading replays it too.
	var journal bytes.Buffer
	if err := bench.WriteEquipment(&journal, b.equip); err != nil { // replays react as this bench does
		return nil, fmt.Errorf("benchtasks: the bench's journal: %w", err)
	}
	enc := json.NewEncoder(&journal)
	for _, c := range t.setup {
		if _, err := d.Do(c); err != nil {
			return nil, fmt.Errorf("benchtasks: %s: setting up the bench: %w", it.ID, err)
		}
		enc.Encode(c)
	}
	if err := benchrun.WriteJournal(workspace, journal.Bytes()); err != nil {
		return nil, fmt.Errorf("benchtasks: %w", err)
	}
	served, err := benchrun.Serve(ctx, workspace, &benchrun.ServeOptions{Keep: true, Deck: d})
	if err != nil {
		return nil, fmt.Errorf("benchtasks: %w", err)
	}
	return func() { served.Close() }, nil
}

// Grade grades without a workspace: a bench task's grade needs the trial's bench, so it fails.
func (b *Benchmark) Grade(ctx context.Context, it eval.Item, answer string) (*eval.Grade, error) {
	return b.GradeIn(ctx, it, answer, "")
}

// GradeIn replays the trial's bench journal onto a fresh deck and grades the twin's final
// state and the answer.
func (b *Benchmark) GradeIn(ctx context.Context, it eval.Item, answer, workspace string) (*eval.Grade, error) {
	t, err := b.task(it.ID)
	if err != nil {
		return nil, err
	}
	if workspace == "" {
		return failed("the trial has no workspace, so no bench to grade"), nil
	}
	f, err := benchrun.OpenJournal(workspace)
	if errors.Is(err, os.ErrNotExist) {
		return failed("the workspace has no bench journal " + filepath.Join(benchrun.Dir, benchrun.Journal)), nil
	}
	if err != nil {
		return nil, fmt.Errorf("benchtasks: %w", err)
	}
	defer f.Close()
	d, err := b.deck()
	if err != nil {
		return nil, err
	}
	if _, err := bench.Replay(ctx, d, f); err != nil {
		return nil, fmt.Errorf("benchtasks: %s: %w", filepath.Join(workspace, benchrun.Dir, benchrun.Journal), err)
	}
	return t.grade(d, answer), nil
}

func failed(why string) *eval.Grade {
	return &eval.Grade{Details: map[string]any{"error": why}}
}

// The benchmark is one a trial's workspace is prepared for.
var _ eval.WorkspaceBenchmark = (*Benchmark)(nil)
