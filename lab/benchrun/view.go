package benchrun

import (
	"fmt"
	"slices"

	"github.com/labmate/labmate/lab/bench"
)

// WellView is a well as a plate map draws it.
type WellView struct {
	Volume  float64 `json:"volume_ul"`
	Species string  `json:"species,omitempty"` // the species with the most µmol
	Color   string  `json:"color"`             // #rrggbb, from the composition (Color)
}

// LabwareView is a labware on the deck as the dashboard draws it: its wells by column, and
// those holding liquid.
type LabwareView struct {
	Slot        int                 `json:"slot"`
	Name        string              `json:"name"`
	DisplayName string              `json:"display_name"`
	Tiprack     bool                `json:"tiprack"`
	Columns     [][]string          `json:"columns"`
	Wells       map[string]WellView `json:"wells"`
	FreshTips   int                 `json:"fresh_tips,omitempty"`
}

// View is the deck's labware for drawing, the wells coloured from the spectra of lib.
func View(d *bench.Deck, lib *bench.Library) ([]LabwareView, error) {
	views := []LabwareView{}
	for _, lw := range d.Snapshot().Labware {
		def, err := d.Labware(lw.Name)
		if err != nil {
			return nil, err
		}
		v := LabwareView{Slot: lw.Slot, Name: lw.Name, DisplayName: lw.DisplayName, Tiprack: def.Parameters.IsTiprack,
			Columns: def.Ordering, Wells: map[string]WellView{}, FreshTips: len(lw.Fresh)}
		for well, c := range lw.Wells {
			wv := WellView{Volume: c.Volume, Color: Color(c, lib)}
			most := 0.0
			for _, s := range c.Names() {
				if n := c.Species[s]; n > most {
					wv.Species, most = s, n
				}
			}
			v.Wells[well] = wv
		}
		views = append(views, v)
	}
	return views, nil
}

// solvent is the colour of a well of solvent alone or of species without a spectrum.
const solvent = "#d8e4ee"

// Color is the colour a well's liquid looks: each species with a spectrum in lib absorbs
// around its λmax and shows the complementary colour; a mix is the average of its species'
// colours weighted by their µmol.
func Color(c bench.Contents, lib *bench.Library) string {
	var r, g, b, sum float64
	names := c.Names()
	slices.Sort(names)
	for _, name := range names {
		s, ok := lib.Spectrum(name)
		if !ok || s.LambdaMax <= 0 {
			continue
		}
		n := c.Species[name]
		cr, cg, cb := visible(s.LambdaMax)
		r, g, b, sum = r+n*(1-cr), g+n*(1-cg), b+n*(1-cb), sum+n
	}
	if sum <= 0 {
		return solvent
	}
	return fmt.Sprintf("#%02x%02x%02x", int(255*r/sum+0.5), int(255*g/sum+0.5), int(255*b/sum+0.5))
}

// visible is the colour of light of wavelength nm, 0…1 each (Bruton's approximation).
func visible(nm float64) (r, g, b float64) {
	switch {
	case nm < 380:
		return 0.5, 0, 1
	case nm < 440:
		return (440 - nm) / 60, 0, 1
	case nm < 490:
		return 0, (nm - 440) / 50, 1
	case nm < 510:
		return 0, 1, (510 - nm) / 20
	case nm < 580:
		return (nm - 510) / 70, 1, 0
	case nm < 645:
		return 1, (645 - nm) / 65, 0
	}
	return 1, 0, 0
}
