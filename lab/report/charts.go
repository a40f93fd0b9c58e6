package report

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/loadlab/loadlab/lab/results"
)

// Chart is one PNG drawn with gonum/plot.
type Chart struct {
	Title string
	File  string // path relative to the output directory, e.g. charts/keepalive-1k-spectrum.png
	PNG   []byte
}

// Chart size and resolution.
const (
	chartW   = 8 * vg.Inch
	chartH   = 4.5 * vg.Inch
	chartDPI = 96
	minMs    = 0.001 // log axes need values > 0
)

// renderPNG draws plots stacked vertically into one PNG.
func renderPNG(h vg.Length, plots ...*plot.Plot) ([]byte, error) {
	c := vgimg.NewWith(vgimg.UseWH(chartW, h), vgimg.UseDPI(chartDPI))
	dc := draw.New(c)
	if len(plots) == 1 {
		plots[0].Draw(dc)
	} else {
		grid := make([][]*plot.Plot, len(plots))
		for i, p := range plots {
			grid[i] = []*plot.Plot{p}
		}
		tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Points(8), PadTop: vg.Points(4), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(8)}
		canvases := plot.Align(grid, tiles, dc)
		for i, p := range plots {
			p.Draw(canvases[i][0])
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	return p
}

// addLine adds one labelled line with points, in the i-th color.
func addLine(p *plot.Plot, i int, label string, xys plotter.XYs, points bool) error {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return err
	}
	l.Color = plotutil.Color(i)
	l.Width = vg.Points(1.5)
	p.Add(l)
	p.Legend.Add(label, l)
	if points {
		s, err := plotter.NewScatter(xys)
		if err != nil {
			return err
		}
		s.Color = plotutil.Color(i)
		s.Shape = plotutil.Shape(i)
		p.Add(s)
	}
	return nil
}

// linearTicks are gonum's default ticks with labels like 25,000 and 0.5.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = tickLabel(ticks[i].Value)
		}
	}
	return ticks
}

// logTicks label 1, 2 and 5 times each power of ten on a log axis.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 || hi <= 0 || hi < lo {
		return nil
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := base * float64(m)
			if v < lo/1.0001 || v > hi*1.0001 {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = tickLabel(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes a tick value compactly: 0.005, 0.5, 20, 25,000.
func tickLabel(v float64) string {
	switch {
	case v == 0:
		return "0"
	case math.Abs(v) >= 1000:
		return fmtInt(int64(math.Round(v)))
	case math.Abs(v) >= 1:
		return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.1f", v), "0"), ".")
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", v), "0"), ".")
}

// headroom raises an axis maximum so the legend in the top left corner
// does not cover the lines.
func headroom(p *plot.Plot, log bool) {
	if log {
		p.Y.Max *= 4
		return
	}
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)*1.3
}

// spectrumSeries is one proxy's percentile spectrum.
type spectrumSeries struct {
	label string
	pts   []results.SpectrumPoint
	count uint64 // requests measured: where the maximum sits on the axis
}

// percentileTicks label the 1/(1-p) axis as percentiles.
type percentileTicks struct{}

func (percentileTicks) Ticks(lo, hi float64) []plot.Tick {
	labels := []string{"0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "99.9999%", "99.99999%"}
	var ticks []plot.Tick
	for i, v := 0, 1.0; v <= hi*1.0001 && i < len(labels); i, v = i+1, v*10 {
		if v >= lo/1.0001 {
			ticks = append(ticks, plot.Tick{Value: v, Label: labels[i]})
		}
		if i == 0 && 2 >= lo && 2 <= hi {
			ticks = append(ticks, plot.Tick{Value: 2, Label: "50%"})
		}
	}
	return ticks
}

// spectrumChart draws latency against percentile, HdrHistogram style: the
// x axis is 1/(1-p) on a log scale, labelled 90%, 99%, 99.9%...
func spectrumChart(title, file string, series []spectrumSeries) (Chart, error) {
	p := newPlot(title, "percentile", "corrected latency (ms)")
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	drawn := 0
	for i, s := range series {
		var xys plotter.XYs
		for _, pt := range s.pts {
			x := 1 / (1 - pt.P/100)
			if pt.P >= 100 {
				x = math.Max(float64(s.count), 1)
				if len(xys) > 0 && x <= xys[len(xys)-1].X {
					x = xys[len(xys)-1].X * 1.5
				}
			}
			xys = append(xys, plotter.XY{X: x, Y: math.Max(float64(pt.Us)/1000, minMs)})
		}
		if len(xys) < 2 {
			continue
		}
		if err := addLine(p, i, s.label, xys, false); err != nil {
			return Chart{}, err
		}
		drawn++
	}
	if drawn == 0 {
		return Chart{}, errNoData
	}
	headroom(p, true)
	png, err := renderPNG(chartH, p)
	return Chart{Title: title, File: file, PNG: png}, err
}

// errNoData means a chart would be empty; the caller leaves it out.
var errNoData = fmt.Errorf("no data to plot")

// searchSeries is one proxy's search steps.
type searchSeries struct {
	label string
	steps []*results.Step
}

// searchCharts draws, for every proxy, the delivered rate and the p99
// against the offered rate of each search step (the diagonal is "delivered
// everything").
func searchCharts(title, file string, series []searchSeries) (Chart, error) {
	ach := newPlot(title+": delivered vs offered", "offered (req/s)", "delivered 2xx (req/s)")
	lat := newPlot(title+": p99 vs offered", "offered (req/s)", "p99 (ms)")
	ach.X.Scale, lat.X.Scale = plot.LogScale{}, plot.LogScale{}
	ach.X.Tick.Marker, lat.X.Tick.Marker = logTicks{}, logTicks{}
	ach.Y.Scale, lat.Y.Scale = plot.LogScale{}, plot.LogScale{}
	ach.Y.Tick.Marker, lat.Y.Tick.Marker = logTicks{}, logTicks{}
	lo, hi := math.Inf(1), 0.0
	drawn := 0
	for i, s := range series {
		var a, l plotter.XYs
		steps := append([]*results.Step(nil), s.steps...)
		sort.SliceStable(steps, func(i, j int) bool { return steps[i].Rate < steps[j].Rate })
		for _, st := range steps {
			if st.Result == nil || st.Rate <= 0 {
				continue
			}
			a = append(a, plotter.XY{X: st.Rate, Y: math.Max(st.Result.AchievedRate, 1)})
			if st.Result.Requests > 0 { // no responses: no latency to draw
				l = append(l, plotter.XY{X: st.Rate, Y: math.Max(float64(st.Result.Latency.P99)/1000, minMs)})
			}
			lo, hi = math.Min(lo, st.Rate), math.Max(hi, st.Rate)
		}
		if len(a) == 0 {
			continue
		}
		if err := addLine(ach, i, s.label, a, true); err != nil {
			return Chart{}, err
		}
		if err := addLine(lat, i, s.label, l, true); err != nil {
			return Chart{}, err
		}
		drawn++
	}
	if drawn == 0 {
		return Chart{}, errNoData
	}
	diag, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo}, {X: hi, Y: hi}})
	if err != nil {
		return Chart{}, err
	}
	diag.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
	ach.Add(diag)
	ach.Legend.Add("offered", diag)
	headroom(ach, true)
	headroom(lat, true)
	png, err := renderPNG(2*chartH, ach, lat)
	return Chart{Title: title + ": search steps", File: file, PNG: png}, err
}

// timeSeriesChart draws one step second by second: 2xx/s, non-2xx/s and
// failed/s above, TIME_WAIT in the proxy's namespace below, so a "works
// 30 s, fails 30 s" pattern shows at a glance.
func timeSeriesChart(title, file string, st *results.Step) (Chart, error) {
	if st == nil || st.Result == nil || len(st.Result.Seconds) == 0 {
		return Chart{}, errNoData
	}
	rates := newPlot(title, "seconds", "responses per second")
	var ok, non2xx, errs plotter.XYs
	for _, s := range st.Result.Seconds {
		x := float64(s.T)
		ok = append(ok, plotter.XY{X: x, Y: float64(s.OK)})
		non2xx = append(non2xx, plotter.XY{X: x, Y: float64(s.Non2xx)})
		errs = append(errs, plotter.XY{X: x, Y: float64(s.Errors)})
	}
	if err := addLine(rates, 2, "2xx/s", ok, false); err != nil {
		return Chart{}, err
	}
	if err := addLine(rates, 0, "non-2xx/s (502...)", non2xx, false); err != nil {
		return Chart{}, err
	}
	if err := addLine(rates, 4, "failed/s", errs, false); err != nil {
		return Chart{}, err
	}
	rates.Y.Min = 0
	rates.Y.Tick.Marker = linearTicks{}
	headroom(rates, false)
	tw := newPlot("", "seconds", "TIME_WAIT (proxy namespace)")
	tw.Y.Tick.Marker = linearTicks{}
	var tws plotter.XYs
	for _, s := range st.Proxy {
		if s.TimeWait >= 0 {
			tws = append(tws, plotter.XY{X: s.T, Y: float64(s.TimeWait)})
		}
	}
	plots := []*plot.Plot{rates}
	h := chartH
	if len(tws) > 0 {
		if err := addLine(tw, 1, "TIME_WAIT", tws, false); err != nil {
			return Chart{}, err
		}
		tw.Y.Min = 0
		headroom(tw, false)
		tw.X.Min, tw.X.Max = rates.X.Min, rates.X.Max
		plots = append(plots, tw)
		h = chartH * 1.6
	}
	png, err := renderPNG(h, plots...)
	return Chart{Title: title, File: file, PNG: png}, err
}

// chartFile makes a file name for a chart from its parts.
func chartFile(parts ...string) string {
	s := strings.Join(parts, "-")
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, s)
	return "charts/" + s + ".png"
}
