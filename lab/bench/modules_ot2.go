package bench

import (
	"fmt"
	"math"
)

// The OT-2's temperature, magnetic and thermocycler modules: their state and how long their
// changes take on the protocol clock. Temperatures ramp at the rates below (estimates from the
// modules' specifications), holds and profiles take their time; the liquid in their labware is
// not changed by temperature.
//
//	temp_set         slot, celsius, wait (set_temperature waits for the ramp; start_set_temperature not)
//	temp_deactivate  slot
//	mag_engage       slot, height (mm above the labware's base; none: the labware's engage height)
//	mag_disengage    slot
//	tc_lid           slot, mode (open, close)
//	tc_set_lid       slot, celsius
//	tc_set_block     slot, celsius, seconds (the hold)
//	tc_profile       slot, profile (celsius, seconds), repetitions
//	tc_deactivate    slot, mode (lid, block, or both when empty)
const (
	TemperatureModuleV1  = "temperatureModuleV1"
	TemperatureModuleV2  = "temperatureModuleV2"
	MagneticModuleV1     = "magneticModuleV1"
	MagneticModuleV2     = "magneticModuleV2"
	ThermocyclerModuleV1 = "thermocyclerModuleV1"
	ThermocyclerModuleV2 = "thermocyclerModuleV2"
)

// Ramp rates in °C/s and the magnet's travel time in s.
const (
	tempHeatRate  = 0.5
	tempCoolRate  = 0.2
	tcBlockHeat   = 4.0
	tcBlockCool   = 2.0
	tcLidRate     = 0.8
	tcLidSeconds  = 20.0
	magnetSeconds = 5.0
	ambientC      = 25.0
)

// ProfileStep is a thermocycler profile's step.
type ProfileStep struct {
	Celsius float64 `json:"celsius"`
	Seconds float64 `json:"seconds"`
}

// ot2State is a temperature, magnetic or thermocycler module's state.
type ot2State struct {
	Temp     *float64 // the block's (temperature module, thermocycler) target, reached
	LidTemp  *float64
	LidOpen  bool
	Magnet   *float64 // engaged height, nil when disengaged
	Profiles int      // thermocycler: profile cycles run
}

var ot2ModuleCommands = []string{"mag_disengage", "mag_engage", "tc_deactivate", "tc_lid", "tc_profile", "tc_set_block", "tc_set_lid", "temp_deactivate", "temp_set"}

func isOT2Module(model string) bool {
	switch model {
	case TemperatureModuleV1, TemperatureModuleV2, MagneticModuleV1, MagneticModuleV2, ThermocyclerModuleV1, ThermocyclerModuleV2:
		return true
	}
	return false
}

func ramp(from, to, up, down float64) float64 {
	if to >= from {
		return (to - from) / up
	}
	return (from - to) / down
}

func temp(p *float64) float64 {
	if p == nil {
		return ambientC
	}
	return *p
}

func celsius(c float64, lo, hi float64) error {
	if math.IsNaN(c) || c < lo || c > hi {
		return fail(ErrModule, "%v °C is outside %g–%g °C", c, lo, hi)
	}
	return nil
}

// setCelsius checks a temperature; in a protocol run, one outside the module's range within
// 0–110 °C is a warning (the module holds what it can).
func (d *Deck) setCelsius(ev *Event, c, lo, hi float64) error {
	if d.lenient() && c >= 0 && c <= 110 && (c < lo || c > hi) {
		warn(ev, fmt.Sprintf("%g °C is outside the module's %g–%g °C", c, lo, hi))
		return nil
	}
	return celsius(c, lo, hi)
}

// doOT2Module carries out a temperature, magnetic or thermocycler module's command.
func (d *Deck) doOT2Module(ev *Event, name string, a *Args) (bool, error) {
	var kind string
	switch name {
	case "temp_set", "temp_deactivate":
		kind = "temperature"
	case "mag_engage", "mag_disengage":
		kind = "magnetic"
	case "tc_lid", "tc_set_lid", "tc_set_block", "tc_profile", "tc_deactivate":
		kind = "thermocycler"
	default:
		return false, nil
	}
	var n int
	fmt.Sscan(a.Slot, &n)
	m := d.modules[n]
	if m == nil || m.ot2 == nil || moduleKind(m.model) != kind {
		return true, fail(ErrModule, "no %s module in slot %q", kind, a.Slot)
	}
	s := m.ot2
	switch name {
	case "temp_set":
		if err := d.setCelsius(ev, a.Celsius, 4, 95); err != nil {
			return true, err
		}
		if a.Wait {
			ev.Seconds = ramp(temp(s.Temp), a.Celsius, tempHeatRate, tempCoolRate)
		}
		c := a.Celsius
		s.Temp = &c
	case "temp_deactivate":
		s.Temp = nil
	case "mag_engage":
		h := 0.0
		if a.Height != nil {
			h = *a.Height
		} else if lw := d.slots[n-1]; lw != nil {
			h = lw.def.lw.Parameters.MagneticEngageHeight
		}
		if h < -2.5 || h > 25 {
			return true, fail(ErrModule, "engage height %g mm is outside the magnet's −2.5–25 mm", h)
		}
		s.Magnet = &h
		ev.Seconds = magnetSeconds
	case "mag_disengage":
		s.Magnet = nil
		ev.Seconds = magnetSeconds
	case "tc_lid":
		s.LidOpen = a.Mode == "open"
		ev.Seconds = tcLidSeconds
	case "tc_set_lid":
		if err := d.setCelsius(ev, a.Celsius, 37, 110); err != nil {
			return true, err
		}
		ev.Seconds = ramp(temp(s.LidTemp), a.Celsius, tcLidRate, tcLidRate)
		c := a.Celsius
		s.LidTemp = &c
	case "tc_set_block":
		if err := d.setCelsius(ev, a.Celsius, 4, 99); err != nil {
			return true, err
		}
		ev.Seconds = ramp(temp(s.Temp), a.Celsius, tcBlockHeat, tcBlockCool) + max(a.Seconds, 0)
		c := a.Celsius
		s.Temp = &c
	case "tc_profile":
		reps := max(a.Repetitions, 1)
		for range reps {
			for _, st := range a.Profile {
				if err := d.setCelsius(ev, st.Celsius, 4, 99); err != nil {
					return true, err
				}
				ev.Seconds += ramp(temp(s.Temp), st.Celsius, tcBlockHeat, tcBlockCool) + max(st.Seconds, 0)
				c := st.Celsius
				s.Temp = &c
			}
		}
		s.Profiles += reps
	case "tc_deactivate":
		if a.Mode != "block" {
			s.LidTemp = nil
		}
		if a.Mode != "lid" {
			s.Temp = nil
		}
	}
	st := m.state()
	ev.Module = &st
	return true, nil
}

func moduleKind(model string) string {
	switch model {
	case TemperatureModuleV1, TemperatureModuleV2:
		return "temperature"
	case MagneticModuleV1, MagneticModuleV2:
		return "magnetic"
	case ThermocyclerModuleV1, ThermocyclerModuleV2:
		return "thermocycler"
	}
	return model
}
