package study

import (
	"bytes"
	"fmt"
	"image/color"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// The charts, drawn with gonum.org/v1/plot into PNG (vgimg only: nothing
// in them depends on the machine, so a seed gives the same bytes).

// Chart is one PNG chart of the report.
type Chart struct {
	Name string // file name
	PNG  []byte
}

// ratioChart is the bar chart of every mode's mean TTFB over the oracle's.
const ratioChart = "ratio-to-oracle.png"

// timelineScenarios get a chart of the latency modes' first picks over
// time: the scenarios where the best first choice changes.
var timelineScenarios = []string{"b", "d", "d-breaker", "e", "f", "capacity", "fleet"}

func timelineChart(scenario string) string { return "first-picks-" + scenario + ".png" }

// targetColors keep a target's colour the same in every chart.
var targetColors = []color.Color{
	color.RGBA{24, 90, 169, 255},  // t40
	color.RGBA{0, 140, 72, 255},   // t80
	color.RGBA{238, 46, 47, 255},  // t20
	color.RGBA{102, 44, 145, 255}, // t10
}

// modeColors tell the modes' bars apart (gonum's default palette has
// seven colours, fewer than the modes).
var modeColors = []color.Color{
	color.RGBA{78, 121, 167, 255},  // blue
	color.RGBA{242, 142, 43, 255},  // orange
	color.RGBA{225, 87, 89, 255},   // red
	color.RGBA{118, 183, 178, 255}, // teal
	color.RGBA{89, 161, 79, 255},   // green
	color.RGBA{237, 201, 72, 255},  // yellow
	color.RGBA{176, 122, 161, 255}, // purple
	color.RGBA{255, 157, 167, 255}, // pink
	color.RGBA{156, 117, 95, 255},  // brown
	color.RGBA{186, 176, 172, 255}, // grey
	color.RGBA{31, 59, 115, 255},   // navy
	color.RGBA{140, 209, 125, 255}, // light green
}

// Charts draws every chart the report shows.
func (st *Study) Charts() ([]Chart, error) {
	var out []Chart
	png, err := st.ratioPNG()
	if err != nil {
		return nil, err
	}
	out = append(out, Chart{Name: ratioChart, PNG: png})
	for i, s := range st.Scenarios {
		if s.Lengths != nil {
			png, err := st.lastTokenPNG(i)
			if err != nil {
				return nil, fmt.Errorf("chart %s: %w", lastTokenChart, err)
			}
			out = append(out, Chart{Name: lastTokenChart, PNG: png})
		}
	}
	if !st.hasLatencyModes() {
		return out, nil
	}
	for i, s := range st.Scenarios {
		if !slices.Contains(timelineScenarios, s.Name) {
			continue
		}
		png, err := st.timelinePNG(i)
		if err != nil {
			return nil, fmt.Errorf("chart %s: %w", timelineChart(s.Name), err)
		}
		out = append(out, Chart{Name: timelineChart(s.Name), PNG: png})
	}
	return out, nil
}

// ratioPNG is a grouped bar chart: one group per scenario, one bar per
// mode, the oracle's 1.0 as a line.
func (st *Study) ratioPNG() ([]byte, error) {
	p := plot.New()
	p.Y.Label.Text = "mean TTFB / oracle's"
	p.Y.Min = 0
	modes := st.Modes[:len(st.Modes)-1]
	var names []string
	for _, s := range st.Scenarios {
		names = append(names, "("+s.Name+")")
	}
	// The chart is wide enough for the legend and for bars at least
	// minBar wide filling 80 % of each scenario's group, so that groups
	// never overlap.
	const minBar, maxBar, cell, margin = 4.0, 12.0, 140.0, 90.0
	groups, bars := float64(len(st.Scenarios)), float64(len(modes))
	w := max(760, cell*bars+40, margin+groups*bars*minBar/0.8)
	width := vg.Points(min(maxBar, (w-margin)/groups*0.8/bars))
	legend, top, err := groupedBars(p, modes, len(st.Scenarios), width, func(j, i int) float64 { return st.Ratio(st.Results[i][j]) })
	if err != nil {
		return nil, err
	}
	p.Y.Max = top * 1.05
	one, err := hline(1, -0.5, float64(len(st.Scenarios))-0.5)
	if err != nil {
		return nil, err
	}
	p.Add(one, plotter.NewGrid())
	p.NominalX(names...)
	const header = 44
	h := vg.Points(400)
	return pngOf(vg.Points(w), h, func(c draw.Canvas) {
		drawHeader(draw.Crop(c, 0, 0, h-vg.Points(header), 0),
			"Mean time to first byte over the oracle's (1 = the oracle), per scenario and mode", legend, cell)
		p.Draw(draw.Crop(c, 0, -vg.Points(8), 0, -vg.Points(header)))
	})
}

// timelinePNG draws, for each latency mode run, every target's share of
// the first picks per bucket, with the scenario's changes marked.
func (st *Study) timelinePNG(i int) ([]byte, error) {
	s := st.Scenarios[i]
	var plots [][]*plot.Plot
	for j, m := range st.Modes {
		if !slices.Contains(LatencyModes, m) {
			continue
		}
		r := st.Results[i][j]
		p := plot.New()
		p.Title.Text = m
		p.Y.Label.Text = "share of first picks"
		p.X.Min, p.X.Max = 0, st.Options.Duration.Seconds()
		p.Y.Min, p.Y.Max = 0, 1
		p.Add(plotter.NewGrid())
		half, err := hline(0.5, 0, st.Options.Duration.Seconds())
		if err != nil {
			return nil, err
		}
		p.Add(half)
		for _, ch := range s.Changes {
			if ch.At >= st.Options.Duration {
				continue
			}
			v, err := plotter.NewLine(plotter.XYs{{X: ch.At.Seconds(), Y: 0}, {X: ch.At.Seconds(), Y: 1}})
			if err != nil {
				return nil, err
			}
			v.Color = color.Gray{Y: 90}
			v.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(v)
		}
		for t := range s.Targets {
			l, err := plotter.NewLine(pickSteps(r, t))
			if err != nil {
				return nil, err
			}
			l.StepStyle = plotter.PostStep
			l.Color = targetColors[t%len(targetColors)]
			l.Width = vg.Points(1.2)
			p.Add(l)
		}
		plots = append(plots, []*plot.Plot{p})
	}
	if len(plots) == 0 {
		return nil, fmt.Errorf("no latency mode ran")
	}
	plots[len(plots)-1][0].X.Label.Text = "seconds of measured time"
	var legend []legendEntry
	for t, target := range s.Targets {
		line := plotter.NewFunction(func(float64) float64 { return 0 })
		line.Color = targetColors[t%len(targetColors)]
		line.Width = vg.Points(2)
		legend = append(legend, legendEntry{target.Name, line})
	}
	const header = 44
	h := vg.Points(header + 190*float64(len(plots)))
	w := vg.Points(720)
	return pngOf(w, h, func(c draw.Canvas) {
		top := draw.Crop(c, 0, 0, h-vg.Points(header), 0)
		drawHeader(top, fmt.Sprintf("(%s) %s: share of first picks per %s", s.Name, s.Title, ms(Bucket)), legend, 60)
		body := draw.Crop(c, 0, 0, 0, -vg.Points(header))
		tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(8), PadTop: vg.Points(4),
			PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(12)}
		canvases := plot.Align(plots, tiles, body)
		for k := range plots {
			plots[k][0].Draw(canvases[k][0])
		}
	})
}

// legendEntry is one entry of a chart's legend.
type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// drawHeader puts a title on the first line of c and the legend's entries
// side by side, cell points apart, on the second: gonum's legends stack
// their entries over the plot, where they would hide the lines.
func drawHeader(c draw.Canvas, title string, entries []legendEntry, cell float64) {
	style := plot.New().Title.TextStyle
	style.XAlign, style.YAlign = draw.XCenter, draw.YTop
	c.FillText(style, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y - vg.Points(4)}, title)
	row := draw.Crop(c, 0, 0, 0, -vg.Points(22))
	width := vg.Points(cell * float64(len(entries)))
	x0 := (row.Min.X+row.Max.X)/2 - width/2
	for k, e := range entries {
		l := plot.NewLegend()
		l.Left, l.Top = true, true
		l.Add(e.name, e.thumb)
		cellCanvas := row
		cellCanvas.Min.X = x0 + vg.Points(cell*float64(k))
		cellCanvas.Max.X = cellCanvas.Min.X + vg.Points(cell)
		l.Draw(cellCanvas)
	}
}

// pickSteps are target t's first-pick shares at each bucket start, and the
// last one again at the end, for a post-step line.
func pickSteps(r *Result, t int) plotter.XYs {
	var xys plotter.XYs
	for b := range r.Picks {
		y := r.PickShareAt(b, t)
		if y != y { // NaN: no first pick in the bucket
			y = 0
		}
		xys = append(xys, plotter.XY{X: (time.Duration(b) * Bucket).Seconds(), Y: y})
	}
	if n := len(xys); n > 0 {
		xys = append(xys, plotter.XY{X: r.duration.Seconds(), Y: xys[n-1].Y})
	}
	return xys
}

// hline is a dotted horizontal reference line at y from x0 to x1.
func hline(y, x0, x1 float64) (*plotter.Line, error) {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return nil, err
	}
	l.Color = color.Gray{Y: 60}
	l.Dashes = []vg.Length{vg.Points(1.5), vg.Points(2.5)}
	return l, nil
}

// pngOf draws into a w x h canvas on a white background and encodes it.
func pngOf(w, h vg.Length, draw1 func(draw.Canvas)) ([]byte, error) {
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseBackgroundColor(color.White))
	draw1(draw.New(img))
	var b bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// groupedBars adds one bar series a mode to p, the modes side by side
// within each of n groups, each bar value(mode, group), and returns the
// legend entries and the tallest bar (at least 1).
func groupedBars(p *plot.Plot, modes []string, n int, width vg.Length, value func(j, g int) float64) ([]legendEntry, float64, error) {
	var legend []legendEntry
	top := 1.0
	for j, m := range modes {
		vals := make(plotter.Values, n)
		for g := range n {
			vals[g] = value(j, g)
			top = max(top, vals[g])
		}
		bars, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return nil, 0, err
		}
		bars.LineStyle.Width = 0
		bars.Color = modeColors[j%len(modeColors)]
		bars.Offset = vg.Length(float64(j)-float64(len(modes)-1)/2) * width
		p.Add(bars)
		legend = append(legend, legendEntry{m, bars})
	}
	return legend, top, nil
}
