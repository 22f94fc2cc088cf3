package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Backend is a liquid handler that carries out Commands: the twin (Twin) now, a real robot
// later, behind the same three methods. A Backend is safe for concurrent use.
//
// # A real robot behind Backend
//
// An Opentrons robot's HTTP API (port 31950, header Opentrons-Version: 3) maps one to one:
// create a run (POST /runs), then each Command becomes POST /runs/{id}/commands?waitUntilComplete=true
// with {"data": {"commandType": …, "params": …}}:
//
//	load_labware     loadLabware {loadName, namespace "opentrons", version 1, location {slotName}}
//	                 — the result's labwareId and definition are what Labware returns
//	load_instrument  loadPipette {pipetteName, mount}
//	load_liquid      loadLiquid {liquidId, labwareId, volumeByWell}, one liquid per mix of species
//	pick_up_tip      pickUpTip {pipetteId, labwareId, wellName}
//	drop_tip         dropTip {pipetteId, labwareId "fixedTrash", wellName "A1"}
//	return_tip       dropTip {pipetteId, labwareId, wellName} of the tip's own rack well
//	aspirate         aspirate {pipetteId, labwareId, wellName, volume, flowRate}
//	dispense         dispense {pipetteId, labwareId, wellName, volume, flowRate}
//	blow_out         blowout {pipetteId, labwareId, wellName, flowRate}
//	load_module      loadModule {model, location {slotName}}; labware on it: loadLabware with
//	                 location {moduleId}
//	hs_*             heaterShaker/setAndWaitForTemperature (after setTargetTemperature),
//	                 deactivateHeater, setAndWaitForShakeSpeed, deactivateShaker,
//	                 openLabwareLatch, closeLabwareLatch {moduleId, …}
//	delay            waitForDuration {seconds}
//	reader_initialize, read_plate
//	                 absorbanceReader/initialize {moduleId, measureMode, sampleWavelengths},
//	                 absorbanceReader/read after moveLabware onto the reader (the Flex's gripper)
//	analyze, deck    no robot command: analyze is labmate's analysis twin; deck is GET /runs/{id}
//	mix, transfer, distribute, consolidate
//	                 planned into the simple commands above by a twin that runs alongside
//	                 (Deck.Clone, then Do on the clone) and sent one by one
//
// A command that fails comes back with status "failed" and an error whose detail becomes the
// CommandError's Problem. Such a backend says Physical() true, so Guard asks for approval
// before each of its commands.
type Backend interface {
	// Do carries out a command and says what it did, or refuses it with a *CommandError.
	Do(ctx context.Context, cmd Command) (*Event, error)
	// Labware returns the definition of loaded labware, by label or slot number.
	Labware(ctx context.Context, name string) (*Labware, error)
	// Physical says whether commands move a real instrument (and so need approval).
	Physical() bool
}

// Twin is the Deck as a Backend: it serialises commands onto its deck.
type Twin struct {
	mu   sync.Mutex
	deck *Deck
}

// NewTwin returns a Backend over d; while the Twin is in use, read d only through View.
func NewTwin(d *Deck) *Twin { return &Twin{deck: d} }

// Do carries out cmd on the deck unless ctx has ended.
func (t *Twin) Do(ctx context.Context, cmd Command) (*Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", cmd.Name, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deck.Do(cmd)
}

// Labware returns the definition of loaded labware.
func (t *Twin) Labware(_ context.Context, name string) (*Labware, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deck.Labware(name)
}

// Physical is false: the twin moves nothing.
func (t *Twin) Physical() bool { return false }

// View calls f with the deck while no command runs.
func (t *Twin) View(f func(*Deck)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(t.deck)
}

// ErrNotApproved is a command on a physical backend that its Approver refused.
var ErrNotApproved = errors.New("bench: not approved")

// Approver decides whether a command may run on a physical backend: nil to go ahead, an error
// (wrapping ErrNotApproved) to refuse it.
type Approver func(ctx context.Context, cmd Command) error

// Guard returns b with every command of a physical backend asked of approve first; a twin's
// commands are never asked about. A refused command is not sent to b.
func Guard(b Backend, approve Approver) Backend {
	if !b.Physical() {
		return b
	}
	return &guarded{b, approve}
}

type guarded struct {
	Backend
	approve Approver
}

func (g *guarded) Do(ctx context.Context, cmd Command) (*Event, error) {
	if err := g.approve(ctx, cmd); err != nil {
		return nil, fmt.Errorf("bench: line %d: %s: %w", cmd.Line, describe(cmd.Name, &cmd.Args), err)
	}
	return g.Backend.Do(ctx, cmd)
}
