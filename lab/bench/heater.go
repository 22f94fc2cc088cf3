package bench

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labmate/labmate/internal/seconds"
	"github.com/labmate/labmate/lab"
)

// ErrHeaterShaker is wrapped by the heater-shaker's errors.
var ErrHeaterShaker = errors.New("bench: heater-shaker")

// The heater-shaker's limits, those of the Opentrons Heater-Shaker Module GEN1.
const (
	MinTemperature = 37.0 // °C
	MaxTemperature = 95.0
	MinShakeSpeed  = 200 // rpm
	MaxShakeSpeed  = 3000
	// TemperatureTolerance is how far from a reaction's temperature the plate may be and the
	// reaction still run as mapped: the module's stated accuracy, ±0.5 °C.
	TemperatureTolerance = 0.5
)

// HeaterShakerOptions configure a heater-shaker.
type HeaterShakerOptions struct {
	// Ambient is the plate's temperature while the heater is off, °C; 0: 25 °C.
	Ambient float64
	// YieldNoise is the standard deviation of a reaction's yield about the dataset's, in
	// percentage points (the run-to-run spread of a real plate); the yield stays within
	// 0–100 %. 0: every reaction gives the dataset's yield exactly.
	YieldNoise float64
	// Seed seeds the noise.
	Seed uint64
}

// DefaultHeaterShakerOptions are the options of a nil *HeaterShakerOptions.
var DefaultHeaterShakerOptions = HeaterShakerOptions{Ambient: 25, YieldNoise: 1}

// HeaterShaker holds a plate at a temperature, shaking it or not, and runs the reactions of
// its mapped datasets in the wells that match them (see ReactionSpec). Temperatures are
// reached at once and the contents of a well are taken as mixed whatever the shake speed:
// heating and mixing times are not modelled. A HeaterShaker is safe for concurrent use.
type HeaterShaker struct {
	reactions []*Reaction
	o         HeaterShakerOptions

	mu      sync.Mutex
	src     *rand.PCG // rng's source, copied by a deck's Clone
	rng     *rand.Rand
	target  float64 // °C; 0 while the heater is off
	rpm     int     // 0 while not shaking
	latchOK bool    // the labware latch is closed
}

// NewHeaterShaker makes a heater-shaker that runs the reactions of the given maps, the heater
// and the shaker off and the labware latch open; nil o: DefaultHeaterShakerOptions.
func NewHeaterShaker(reactions []*Reaction, o *HeaterShakerOptions) (*HeaterShaker, error) {
	opt := DefaultHeaterShakerOptions
	if o != nil {
		opt = *o
	}
	if opt.Ambient == 0 {
		opt.Ambient = 25
	}
	if math.IsNaN(opt.YieldNoise) || math.IsInf(opt.YieldNoise, 0) || opt.YieldNoise < 0 {
		return nil, fmt.Errorf("%w: yield noise %g must be finite and not negative", ErrHeaterShaker, opt.YieldNoise)
	}
	if math.IsNaN(opt.Ambient) || opt.Ambient >= MinTemperature {
		return nil, fmt.Errorf("%w: ambient %g °C must be below %g °C", ErrHeaterShaker, opt.Ambient, MinTemperature)
	}
	h := &HeaterShaker{reactions: reactions, o: opt, src: rand.NewPCG(opt.Seed, 0x2545f4914f6cdd1d)}
	h.rng = rand.New(h.src)
	return h, nil
}

// SetTemperature sets the heater to celsius and waits for it (at once, in the twin).
func (h *HeaterShaker) SetTemperature(celsius float64) error {
	if !(celsius >= MinTemperature && celsius <= MaxTemperature) {
		return fmt.Errorf("%w: temperature %g °C is outside %g–%g °C", ErrHeaterShaker, celsius, MinTemperature, MaxTemperature)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.target = celsius
	return nil
}

// DeactivateHeater turns the heater off: the plate returns to ambient.
func (h *HeaterShaker) DeactivateHeater() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.target = 0
}

// Temperature is the plate's temperature: the heater's, or ambient while it is off.
func (h *HeaterShaker) Temperature() float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.temperature()
}

func (h *HeaterShaker) temperature() float64 {
	if h.target == 0 {
		return h.o.Ambient
	}
	return h.target
}

// SetShakeSpeed shakes at rpm; the labware latch must be closed.
func (h *HeaterShaker) SetShakeSpeed(rpm int) error {
	if rpm < MinShakeSpeed || rpm > MaxShakeSpeed {
		return fmt.Errorf("%w: shake speed %d rpm is outside %d–%d rpm", ErrHeaterShaker, rpm, MinShakeSpeed, MaxShakeSpeed)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.latchOK {
		return fmt.Errorf("%w: cannot shake at %d rpm with the labware latch open", ErrHeaterShaker, rpm)
	}
	h.rpm = rpm
	return nil
}

// DeactivateShaker stops shaking.
func (h *HeaterShaker) DeactivateShaker() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rpm = 0
}

// OpenLatch opens the labware latch; not while shaking.
func (h *HeaterShaker) OpenLatch() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rpm != 0 {
		return fmt.Errorf("%w: cannot open the labware latch while shaking at %d rpm", ErrHeaterShaker, h.rpm)
	}
	h.latchOK = false
	return nil
}

// CloseLatch closes the labware latch.
func (h *HeaterShaker) CloseLatch() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.latchOK = true
}

// HoldEvent is what one hold did to the plate.
type HoldEvent struct {
	Labware     string        `json:"labware"`
	Temperature float64       `json:"temperature_c"`
	Shake       int           `json:"shake_rpm"` // 0: not shaking
	Duration    time.Duration `json:"-"`         // duration_s
	// Wells are the wells that hold anything, in the labware's ordering, each with what it did.
	Wells []WellOutcome `json:"wells"`
}

// WellOutcome is what happened in one well during a hold: a reaction, or why none.
type WellOutcome struct {
	Well     string `json:"well"`
	Reaction string `json:"reaction,omitempty"` // the dataset whose reactants the well holds
	// Reactants and Conditions are the dataset row the well matched: the reactant species,
	// in the dataset's column order, and the other components by column.
	Reactants    []string       `json:"reactants,omitempty"`
	Conditions   lab.Conditions `json:"conditions,omitempty"`
	Reacted      bool           `json:"reacted"`
	DatasetYield float64        `json:"dataset_yield,omitempty"` // the row's yield, %
	Yield        float64        `json:"yield,omitempty"`         // this run's yield (with noise), %
	Product      string         `json:"product,omitempty"`
	Formed       float64        `json:"formed_umol,omitempty"` // product formed = each reactant consumed
	Note         string         `json:"note,omitempty"`        // why the well did not react
}

// Hold holds the plate lw, with the contents of its wells given by name, at the current
// temperature for d, running the mapped reactions: a well that matches a row of a dataset,
// held at the row's temperature for at least its time, forms the product with the row's
// yield (plus the noise) and the reactants are consumed as much. Holding longer does not
// change the yield, and a well that already holds its reaction's product does not react
// again. A well that matches no row, or is held too cool, too hot or too short, does not
// react, and its outcome says why. Hold changes the wells' Contents in place.
func (h *HeaterShaker) Hold(ctx context.Context, lw *Labware, wells map[string]*Contents, d time.Duration) (*HoldEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := lw.Parameters.LoadName
	if d <= 0 {
		return nil, fmt.Errorf("%w: hold of %v: the duration must be positive", ErrHeaterShaker, d)
	}
	for _, id := range slices.Sorted(maps.Keys(wells)) {
		if lw.Wells[id] == nil {
			return nil, fmt.Errorf("%w: labware %s has no well %s", ErrHeaterShaker, name, id)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	ev := &HoldEvent{Labware: name, Temperature: h.temperature(), Shake: h.rpm, Duration: d}
	// Every well's outcome first, then the reactions: a hold that fails changes nothing.
	var held []*Contents // the contents of each of ev.Wells
	for _, col := range lw.Ordering {
		for _, id := range col {
			c := wells[id]
			if c == nil || (c.Volume == 0 && len(c.Species) == 0) {
				continue
			}
			out, err := h.react(ctx, id, c, ev.Temperature, d)
			if err != nil {
				return nil, err
			}
			ev.Wells, held = append(ev.Wells, out), append(held, c)
		}
	}
	for i, out := range ev.Wells {
		if out.Reacted {
			for _, sp := range out.Reactants {
				held[i].Species[sp] -= out.Formed
			}
			held[i].Species[out.Product] += out.Formed
		}
	}
	return ev, nil
}

// react works out what happens in one well (without changing it): its reaction, if it has one.
func (h *HeaterShaker) react(ctx context.Context, id string, c *Contents, temp float64, d time.Duration) (WellOutcome, error) {
	out := WellOutcome{Well: id}
	var rx []*Reaction
	for _, r := range h.reactions {
		if r.involves(c) {
			rx = append(rx, r)
		}
	}
	if len(rx) != 1 {
		out.Note = fmt.Sprintf("holds no reactant of a mapped reaction (%s)", strings.Join(reactionNames(h.reactions), ", "))
		if len(rx) > 1 {
			out.Note = fmt.Sprintf("holds reactants of more than one mapped reaction (%s)", strings.Join(reactionNames(rx), ", "))
		}
		return out, nil
	}
	r := rx[0]
	out.Reaction = r.Name
	m, note, err := r.match(ctx, c)
	if err != nil || m == nil {
		out.Note = note
		return out, err
	}
	out.Reactants, out.Conditions, out.Product, out.DatasetYield = m.reactants, m.conditions, m.product, m.yield
	spec := &r.Spec
	switch {
	case c.Species[m.product] > 0:
		out.Note = fmt.Sprintf("already holds the product (%g µmol); the dataset maps a fresh reaction", c.Species[m.product])
	case math.Abs(temp-spec.Temperature) > TemperatureTolerance:
		out.Note = fmt.Sprintf("needs %g °C for %v; held at %g °C", spec.Temperature, spec.Time, temp)
	case d < spec.Time:
		out.Note = fmt.Sprintf("needs %v at %g °C; held %v", spec.Time, spec.Temperature, d)
	}
	if out.Note != "" {
		return out, nil
	}
	y := m.yield
	if h.o.YieldNoise > 0 {
		y = min(100, max(0, y+h.o.YieldNoise*h.rng.NormFloat64()))
	}
	limiting := math.Inf(1)
	for _, sp := range m.reactants {
		limiting = min(limiting, c.Species[sp])
	}
	out.Reacted, out.Yield, out.Formed = true, y, y/100*limiting
	return out, nil
}

func reactionNames(rs []*Reaction) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

// MarshalJSON writes the hold with its duration in seconds (duration_s).
func (e HoldEvent) MarshalJSON() ([]byte, error) {
	type plain HoldEvent
	return seconds.Marshal(plain(e), seconds.F("duration", &e.Duration))
}

// UnmarshalJSON reads duration_s (or an older journal's duration_ns).
func (e *HoldEvent) UnmarshalJSON(b []byte) error {
	type plain HoldEvent
	return seconds.Unmarshal(b, (*plain)(e), seconds.F("duration", &e.Duration))
}
