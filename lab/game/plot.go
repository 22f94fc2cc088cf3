package game

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot draws the mean NMA per turn of each planner, with reference curves dashed.
func Plot(path, title string, ss []*Summary, refs []*Reference) error {
	p := plot.New()
	p.Title.Text = title + ": mean NMA per turn"
	p.X.Label.Text = "turn"
	p.Y.Label.Text = "NMA"
	p.Legend.Top = false
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	palette := []color.Color{
		color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
		color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
		color.RGBA{0x8c, 0x56, 0x4b, 0xff}, color.RGBA{0x17, 0xbe, 0xcf, 0xff},
	}
	i := 0
	add := func(name string, ys []float64, dashed bool) error {
		var pts plotter.XYs
		for t, y := range ys {
			if !math.IsNaN(y) {
				pts = append(pts, plotter.XY{X: float64(t + 1), Y: y})
			}
		}
		if len(pts) == 0 {
			return nil
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return fmt.Errorf("plot %s: %w", name, err)
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		if dashed {
			l.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		}
		i++
		p.Add(l)
		p.Legend.Add(name, l)
		return nil
	}
	for _, s := range ss {
		ys := make([]float64, len(s.NMACurve))
		for t, c := range s.NMACurve {
			ys[t] = c.Mean
		}
		if err := add(s.Planner, ys, false); err != nil {
			return err
		}
	}
	for _, r := range refs {
		if err := add(r.Method, r.NMA, true); err != nil {
			return err
		}
	}
	p.Legend.ThumbnailWidth = vg.Points(20)
	_ = draw.PosRight
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("saving plot %s: %w", path, err)
	}
	return nil
}
