package bench

import (
	"fmt"
	"iter"
	"math"
	"slices"
)

// step is one simple command of a mix, transfer, distribute or consolidate.
type step struct {
	name string
	args Args
}

// plan turns a mix, transfer, distribute or consolidate into simple commands the way the
// Opentrons Protocol API v2 does.
func (d *Deck) plan(name string, a *Args) ([]step, error) {
	p, err := d.pipette(a.Mount)
	if err != nil {
		return nil, err
	}
	if name == "mix" {
		return planMix(p, a)
	}
	policy := a.NewTip
	if policy == "" {
		policy = "once"
	}
	if policy != "once" && policy != "always" && policy != "never" {
		return nil, fail(ErrBadArgs, "new_tip %q is not always, once or never", a.NewTip)
	}
	if len(a.Source) == 0 || len(a.Dest) == 0 {
		return nil, fail(ErrBadArgs, "%s needs source and dest wells", name)
	}
	if d.lenient() && (name == "distribute" && len(a.Source) > 1 || name == "consolidate" && len(a.Dest) > 1) {
		name = "transfer" // well to well, as the Opentrons API plans a distribute of several sources
	}
	if d.lenient() && a.Volume == 0 && !slices.ContainsFunc(a.Volumes, func(v float64) bool { return v != 0 }) {
		return nil, nil // nothing to move: the robot does nothing either
	}
	capacity, err := working(p, policy, d.startingTip(p))
	if err != nil {
		return nil, err
	}
	if a.AirGap < 0 || math.IsNaN(a.AirGap) {
		return nil, fail(ErrBadArgs, "air_gap %v µL is not a volume", a.AirGap)
	}
	if a.AirGap >= capacity {
		return nil, fail(ErrBadArgs, "an air gap of %s µL leaves no room in a %s µL tip", µl(a.AirGap), µl(capacity))
	}
	capacity -= a.AirGap
	b := planner{mount: a.Mount, a: a}
	perLoad := policy == "always" && name == "transfer" // distribute and consolidate take one tip for all
	once := policy != "never" && !perLoad
	if once {
		b.add("pick_up_tip", Args{})
	}
	switch name {
	case "transfer":
		err = b.transfer(a, capacity, perLoad)
	case "distribute":
		disposal := p.model.min
		if a.Disposal != nil {
			disposal = *a.Disposal
		}
		err = b.distribute(a, capacity, disposal)
	default:
		err = b.consolidate(a, capacity)
	}
	if err != nil {
		return nil, err
	}
	if once {
		b.drop()
	}
	return b.steps, nil
}

func planMix(p *pipette, a *Args) ([]step, error) {
	if a.Repetitions < 0 {
		return nil, fail(ErrBadArgs, "repetitions %d is not a positive count", a.Repetitions)
	}
	if p.tips[0] == nil {
		return nil, p.noTip()
	}
	if err := volume(a.Volume, true); err != nil {
		return nil, err
	}
	v := a.Volume
	if v == 0 {
		v = p.capacity() - p.tips[0].c.Volume
	}
	b := planner{mount: a.Mount}
	for range max(a.Repetitions, 1) {
		b.add("aspirate", Args{Volume: v, Well: a.Well})
		b.add("dispense", Args{Volume: v, Well: a.Well})
	}
	return b.steps, nil
}

// working is the most one aspirate of a transfer takes: the capacity of the tip it uses (the
// attached one for new_tip never, else the next unused one).
func working(p *pipette, policy string, from *spot) (float64, error) {
	if policy == "never" {
		if p.tips[0] == nil {
			return 0, p.noTip()
		}
		return p.capacity(), nil
	}
	r, err := p.nextTips(from)
	if err != nil {
		return 0, err
	}
	return min(r.lw.tips[r.at].volume, p.model.max), nil
}

type planner struct {
	mount string
	a     *Args // the options: mix_before, mix_after, air_gap, blow_out, return_tips
	steps []step
}

// drop discards the tip, or returns it (trash=False).
func (b *planner) drop() {
	if b.a != nil && b.a.ReturnTips {
		b.add("return_tip", Args{})
		return
	}
	b.add("drop_tip", Args{})
}

// mix is a mix option's aspirates and dispenses in a well.
func (b *planner) mix(opt []float64, well string) {
	if len(opt) != 2 || opt[0] < 1 || opt[1] <= 0 {
		return
	}
	for range int(opt[0]) {
		b.add("aspirate", Args{Volume: opt[1], Well: well})
		b.add("dispense", Args{Volume: opt[1], Well: well})
	}
}

// airGap takes the option's air gap into the tip.
func (b *planner) airGap() float64 {
	if b.a == nil || b.a.AirGap <= 0 {
		return 0
	}
	b.add("air_gap", Args{Volume: b.a.AirGap})
	return b.a.AirGap
}

// blowOut blows out where the option says: the trash, the source or the destination well.
func (b *planner) blowOut(src, dst string) {
	switch b.a.BlowOut {
	case "":
	case "source well":
		b.add("blow_out", Args{Well: src})
	case "destination well":
		b.add("blow_out", Args{Well: dst})
	default:
		b.add("blow_out", Args{})
	}
}

func (b *planner) add(name string, a Args) {
	a.Mount = b.mount
	b.steps = append(b.steps, step{name, a})
}

// portion is a volume going to or coming from a well.
type portion struct {
	v    float64
	well string
}

// split divides a volume above the most one aspirate takes as Opentrons does: whole loads
// while more than two remain, then two halves, so no move is left tiny.
func split(v, most float64, well string, into []portion) []portion {
	for v > 2*most {
		into = append(into, portion{most, well})
		v -= most
	}
	if v > most {
		return append(into, portion{v / 2, well}, portion{v / 2, well})
	}
	if v > 0 {
		into = append(into, portion{v, well})
	}
	return into
}

// volumes are the volumes of n moves: volumes one by one, or volume for all.
func volumes(a *Args, n int, what string) ([]float64, error) {
	if a.Volumes == nil {
		if err := volume(a.Volume, false); err != nil {
			return nil, err
		}
		vs := make([]float64, n)
		for i := range vs {
			vs[i] = a.Volume
		}
		return vs, nil
	}
	if a.Volume != 0 {
		return nil, fail(ErrBadArgs, "volume %s µL and %d volumes: give one or the other", µl(a.Volume), len(a.Volumes))
	}
	if len(a.Volumes) != n {
		return nil, fail(ErrBadArgs, "%d volumes for %d %s", len(a.Volumes), n, what)
	}
	for _, v := range a.Volumes {
		if err := volume(v, true); err != nil {
			return nil, err
		}
	}
	return a.Volumes, nil
}

// transfer moves each source to its destination, the shorter list repeated (each of its wells
// in turn for as many moves as the longer list has per well), each volume in loads the tip
// takes; with a new tip for each load when always.
func (b *planner) transfer(a *Args, capacity float64, always bool) error {
	src, dst := a.Source, a.Dest
	n := max(len(src), len(dst))
	if n%len(src) != 0 || n%len(dst) != 0 {
		return fail(ErrBadArgs, "%d source and %d dest wells: one count must divide the other", len(src), len(dst))
	}
	vs, err := volumes(a, n, "transfers")
	if err != nil {
		return err
	}
	for i, v := range vs {
		to := dst[i/(n/len(dst))]
		for _, l := range split(v, capacity, src[i/(n/len(src))], nil) {
			if always {
				b.add("pick_up_tip", Args{})
			}
			b.mix(a.MixBefore, l.well)
			b.add("aspirate", Args{Volume: l.v, Well: l.well})
			ag := b.airGap()
			b.add("dispense", Args{Volume: l.v + ag, Well: to})
			b.mix(a.MixAfter, to)
			b.blowOut(l.well, to)
			if always {
				b.drop()
			}
		}
	}
	return nil
}

// distribute fills the tip from the one source for as many destinations as it holds, plus a
// disposal volume (the pipette's minimum, as Opentrons) blown out into the trash.
func (b *planner) distribute(a *Args, capacity, disposal float64) error {
	if len(a.Source) != 1 {
		return fail(ErrBadArgs, "distribute takes one source well, not %d", len(a.Source))
	}
	most := capacity - disposal
	if most <= volTol {
		return fail(ErrBadArgs, "a %s µL tip leaves no room beside the disposal volume of %s µL", µl(capacity), µl(disposal))
	}
	vs, err := volumes(a, len(a.Dest), "destinations")
	if err != nil {
		return err
	}
	var parts []portion
	for i, v := range vs {
		parts = split(v, most, a.Dest[i], parts)
	}
	for g := range groups(parts, most) {
		b.mix(a.MixBefore, a.Source[0])
		b.add("aspirate", Args{Volume: sum(g) + disposal, Well: a.Source[0]})
		for k, p := range g {
			ag := 0.0
			if k == 0 {
				ag = b.airGap()
			}
			b.add("dispense", Args{Volume: p.v + ag, Well: p.well})
		}
		switch {
		case b.a.BlowOut == "source well":
			b.add("blow_out", Args{Well: a.Source[0]})
		case disposal > 0 || b.a.BlowOut != "":
			b.add("blow_out", Args{})
		}
	}
	return nil
}

// consolidate gathers the sources into the tip for as long as it holds them, then dispenses
// them together into the one destination.
func (b *planner) consolidate(a *Args, capacity float64) error {
	if len(a.Dest) != 1 {
		return fail(ErrBadArgs, "consolidate takes one dest well, not %d", len(a.Dest))
	}
	vs, err := volumes(a, len(a.Source), "sources")
	if err != nil {
		return err
	}
	var parts []portion
	for i, v := range vs {
		parts = split(v, capacity, a.Source[i], parts)
	}
	for g := range groups(parts, capacity) {
		for _, p := range g {
			b.add("aspirate", Args{Volume: p.v, Well: p.well})
		}
		ag := b.airGap()
		b.add("dispense", Args{Volume: sum(g) + ag, Well: a.Dest[0]})
		b.mix(a.MixAfter, a.Dest[0])
		b.blowOut(a.Dest[0], a.Dest[0])
	}
	return nil
}

// groups cuts portions, in order, into runs of at most most µL together.
func groups(parts []portion, most float64) iter.Seq[[]portion] {
	return func(yield func([]portion) bool) {
		for len(parts) > 0 {
			n, v := 1, parts[0].v
			for n < len(parts) && v+parts[n].v <= most+volTol {
				v += parts[n].v
				n++
			}
			if !yield(parts[:n]) {
				return
			}
			parts = parts[n:]
		}
	}
}

func sum(parts []portion) float64 {
	var v float64
	for _, p := range parts {
		v += p.v
	}
	return v
}

// run carries out a plan's commands and, when one is refused, takes back those done, so the
// whole command changes nothing.
func (d *Deck) run(ev *Event, plan []step) error {
	d.undo = make([]func(), 0, 4*len(plan))
	defer func() { d.undo = nil }()
	for i := range plan {
		s := &plan[i]
		if err := d.do(ev, s.name, &s.args); err != nil {
			for _, undo := range slices.Backward(d.undo) {
				undo()
			}
			if p, ok := err.(*problem); ok {
				p.step = fmt.Sprintf("step %d of %d, %s", i+1, len(plan), describe(s.name, &s.args))
			}
			return err
		}
	}
	return nil
}

// The keep functions remember, while a plan runs, how to take back a change about to be made.

func (d *Deck) keepContents(c *Contents) {
	if d.undo != nil {
		old := c.Clone()
		d.undo = append(d.undo, func() { *c = old })
	}
}

func (d *Deck) keepTip(t *tip) {
	if d.undo != nil {
		old := t.copyTo(nil)
		d.undo = append(d.undo, func() { *t = *old })
	}
}

func (d *Deck) keepTips(p *pipette) {
	if d.undo != nil {
		old := slices.Clone(p.tips)
		d.undo = append(d.undo, func() { p.tips = old })
	}
}

func (d *Deck) keepRack(lw *labware, i int) {
	if d.undo != nil {
		old := lw.tips[i]
		d.undo = append(d.undo, func() { lw.tips[i] = old })
	}
}

func (d *Deck) keepTrash() {
	if d.undo != nil {
		old, n := d.trash.Clone(), d.tipsOut
		d.undo = append(d.undo, func() { d.trash, d.tipsOut = old, n })
	}
}
