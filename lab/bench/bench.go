// Package bench is the lab bench twin: a liquid handler on an 11-slot deck with labware from
// Opentrons labware-definition JSON, a plate reader and a heater-shaker with an analysis
// instrument, all behaving as the real instruments do (volumes, tips, contamination, optics,
// reactions), so that a protocol can be written, simulated, checked and run, and a real robot
// put behind the same interface later.
package bench

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
)

// Contents is what a well, a tube or a tip holds: a volume of liquid and the amount of each
// dissolved species in it. A solvent is volume only.
type Contents struct {
	Volume  float64            `json:"volume_ul"`         // µL
	Species map[string]float64 `json:"species,omitempty"` // µmol of each species
}

// Concentration is the molar concentration of species in mol/L (µmol/µL), 0 for an empty well.
func (c *Contents) Concentration(species string) float64 {
	if c.Volume <= 0 {
		return 0
	}
	return c.Species[species] / c.Volume
}

// Clone returns a deep copy.
func (c Contents) Clone() Contents {
	c.Species = maps.Clone(c.Species)
	return c
}

// Names returns the species in name order.
func (c *Contents) Names() []string { return slices.Sorted(maps.Keys(c.Species)) }

// Labware is a labware definition in the Opentrons labware-definition JSON format (schema 2),
// the fields the twin uses.
type Labware struct {
	Ordering   [][]string      `json:"ordering"` // wells by column: ordering[0] is column 1, top to bottom
	Brand      json.RawMessage `json:"brand,omitempty"`
	Metadata   LabwareMetadata `json:"metadata"`
	Dimensions struct {
		X float64 `json:"xDimension"`
		Y float64 `json:"yDimension"`
		Z float64 `json:"zDimension"`
	} `json:"dimensions"`
	Wells      map[string]*WellDef `json:"wells"`
	Parameters struct {
		Format    string  `json:"format"`
		IsTiprack bool    `json:"isTiprack"`
		TipLength float64 `json:"tipLength,omitempty"`
		// TipOverlap is how far a tip goes onto the nozzle (mm).
		TipOverlap float64 `json:"tipOverlap,omitempty"`
		// MagneticEngageHeight is where the magnetic module engages under it (mm).
		MagneticEngageHeight float64 `json:"magneticModuleEngageHeight,omitempty"`
		LoadName             string  `json:"loadName"`
	} `json:"parameters"`
	SchemaVersion int    `json:"schemaVersion"`
	Namespace     string `json:"namespace,omitempty"`
	Version       int    `json:"version,omitempty"`
}

// LabwareMetadata is a definition's metadata.
type LabwareMetadata struct {
	DisplayName     string `json:"displayName"`
	DisplayCategory string `json:"displayCategory"` // wellPlate, reservoir, tipRack, tubeRack…
	DisplayVolUnits string `json:"displayVolumeUnits"`
}

// WellDef is one well's geometry: circular with Diameter, or rectangular with XDim and YDim
// (mm); Depth in mm, TotalLiquidVolume in µL.
type WellDef struct {
	Depth             float64 `json:"depth"`
	TotalLiquidVolume float64 `json:"totalLiquidVolume"`
	Shape             string  `json:"shape"` // "circular" or "rectangular"
	Diameter          float64 `json:"diameter,omitempty"`
	XDim              float64 `json:"xDimension,omitempty"`
	YDim              float64 `json:"yDimension,omitempty"`
	X, Y, Z           float64
}

// Area is the well's cross-section in mm² (so Volume/Area is the liquid's height, the optical
// path of a plate reader reading from the top or bottom).
func (w *WellDef) Area() float64 {
	if w.Shape == "circular" {
		return 3.141592653589793 * w.Diameter * w.Diameter / 4
	}
	return w.XDim * w.YDim
}

// ParseLabware decodes and checks a labware definition; errors name the field.
func ParseLabware(b []byte) (*Labware, error) {
	lw := new(Labware)
	if err := json.Unmarshal(b, lw); err != nil {
		return nil, fmt.Errorf("bench: labware definition: %w", err)
	}
	name := lw.Parameters.LoadName
	switch {
	case lw.SchemaVersion != 2:
		return nil, fmt.Errorf("bench: labware %q: schemaVersion %d (the twin reads schema 2)", name, lw.SchemaVersion)
	case name == "":
		return nil, fmt.Errorf("bench: labware definition without parameters.loadName")
	case len(lw.Ordering) == 0 || len(lw.Wells) == 0:
		return nil, fmt.Errorf("bench: labware %q: no wells", name)
	}
	n := 0
	for c, col := range lw.Ordering {
		for _, id := range col {
			w := lw.Wells[id]
			switch {
			case w == nil:
				return nil, fmt.Errorf("bench: labware %q: ordering column %d names well %q that wells does not define", name, c+1, id)
			case w.TotalLiquidVolume < 0 || w.Depth < 0 || math.IsNaN(w.TotalLiquidVolume) || math.IsNaN(w.Depth):
				return nil, fmt.Errorf("bench: labware %q: well %s: totalLiquidVolume %g µL and depth %g mm must not be negative", name, id, w.TotalLiquidVolume, w.Depth)
			case w.Shape != "circular" && w.Shape != "rectangular":
				return nil, fmt.Errorf("bench: labware %q: well %s: shape %q (circular or rectangular)", name, id, w.Shape)
			case w.Area() <= 0:
				return nil, fmt.Errorf("bench: labware %q: well %s: no cross-section (diameter or x/yDimension)", name, id)
			}
			n++
		}
	}
	if n != len(lw.Wells) {
		return nil, fmt.Errorf("bench: labware %q: ordering lists %d wells, wells defines %d", name, n, len(lw.Wells))
	}
	return lw, nil
}
