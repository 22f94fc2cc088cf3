package eval

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// series is one named bar per category.
type series struct {
	name   string
	values []float64
}

var palette = []color.Color{
	color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0x94, 0x67, 0xbd, 0xff}, color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0x7f, 0x7f, 0x7f, 0xff},
	color.RGBA{0x8c, 0x56, 0x4b, 0xff}, color.RGBA{0x17, 0xbe, 0xcf, 0xff},
}

// bars draws grouped bars, one group per category and one bar per series in it, to a PNG.
func bars(path, title, ylabel string, categories []string, ss []series) error {
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	width := 7 * vg.Inch
	n := max(len(categories), 1)
	// The data area is about 5.5 inches wide: a category's bars take 80% of their share of it.
	bw := min(5.5*vg.Inch/vg.Length(n)*0.8/vg.Length(max(len(ss), 1)), 0.6*vg.Inch)
	top := 0.0
	for i, s := range ss {
		b, err := plotter.NewBarChart(plotter.Values(s.values), bw)
		if err != nil {
			return fmt.Errorf("eval: plotting %s: %w", s.name, err)
		}
		b.LineStyle.Width = 0
		b.Color = palette[i%len(palette)]
		b.Offset = (vg.Length(i) - vg.Length(len(ss)-1)/2) * bw
		p.Add(b)
		p.Legend.Add(s.name, b)
		for _, v := range s.values {
			top = max(top, v)
		}
	}
	p.Legend.Top = true
	p.NominalX(categories...)
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = 0, max(top, 1)*(1.1+0.06*float64(len(ss))) // room for the legend above the bars
	if err := p.Save(width, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("eval: saving the plot %s: %w", path, err)
	}
	return nil
}
