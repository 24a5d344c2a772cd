package study

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// lastTokenChart is (throughput)'s bar chart of the mean time to the last
// token over the oracle's, by answer length.
const lastTokenChart = "last-token-throughput.png"

// lastTokenPNG draws, for scenario i, one group of bars per answer length
// (and one over all answers), one bar per mode: its mean time to the last
// token over the oracle's, the oracle's 1.0 as a line.
func (st *Study) lastTokenPNG(i int) ([]byte, error) {
	s := st.Scenarios[i]
	o := st.Results[i][len(st.Modes)-1]
	modes := st.Modes[:len(st.Modes)-1]
	groups := append(append([]int(nil), s.Lengths...), 0)
	var names []string
	for _, n := range groups {
		if n == 0 {
			names = append(names, "all answers")
		} else {
			names = append(names, fmt.Sprintf("%d tokens", n))
		}
	}
	p := plot.New()
	p.Y.Label.Text = "mean time to the last token / oracle's"
	p.Y.Min = 0
	const cell = 140.0
	w := max(760, cell*float64(len(modes))+40)
	width := vg.Points(min(12, (w-90)/float64(len(groups))*0.8/float64(len(modes))))
	legend, top, err := groupedBars(p, modes, len(groups), width, func(j, g int) float64 { return lastTokenRatio(st.Results[i][j], o, groups[g]) })
	if err != nil {
		return nil, err
	}
	p.Y.Max = top * 1.05
	one, err := hline(1, -0.5, float64(len(groups))-0.5)
	if err != nil {
		return nil, err
	}
	p.Add(one, plotter.NewGrid())
	p.NominalX(names...)
	const header = 44
	h := vg.Points(400)
	return pngOf(vg.Points(w), h, func(c draw.Canvas) {
		drawHeader(draw.Crop(c, 0, 0, h-vg.Points(header), 0),
			fmt.Sprintf("(%s) mean time to the last token over the oracle's, by answer length", s.Name), legend, cell)
		p.Draw(draw.Crop(c, 0, -vg.Points(8), 0, -vg.Points(header)))
	})
}
