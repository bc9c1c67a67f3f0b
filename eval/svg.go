package eval

import (
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
)

// series is one line of a chart.
type series struct {
	name string
	pts  [][2]float64 // (x, y), drawn in order
}

var systemColors = map[string]string{
	SystemEngram: "#d62728",
	SystemBM25:   "#1f77b4",
	SystemDense:  "#2ca02c",
	SystemFull:   "#7f7f7f",
}

// plots returns the SVG files of the report by name.
func (r *Report) plots() map[string]string {
	out := map[string]string{}
	for _, level := range r.Levels() {
		var byK, byTokens []series
		for _, s := range r.systemNames() {
			var k series
			k.name = s
			for _, kk := range recallKs {
				if v, ok := r.value(s, level, recallName(kk)); ok {
					k.pts = append(k.pts, [2]float64{float64(kk), v})
				}
			}
			if len(k.pts) > 0 {
				byK = append(byK, k)
			}
			var t series
			t.name = s
			for _, b := range budgets {
				x, ok1 := r.value(s, level, budgetTokensName(b))
				y, ok2 := r.value(s, level, budgetRecallName(b))
				if ok1 && ok2 && x > 0 {
					t.pts = append(t.pts, [2]float64{x, y})
				}
			}
			if len(t.pts) > 0 {
				byTokens = append(byTokens, t)
			}
		}
		out["recall_at_k_"+level+".svg"] = lineChart(
			fmt.Sprintf("%s: %s recall@k", r.Bench, level), "k (hits)", "recall", byK, recallKs2f(), false)
		out["recall_vs_tokens_"+level+".svg"] = lineChart(
			fmt.Sprintf("%s: %s recall within a token budget", r.Bench, level), "mean context tokens (cl100k, log scale)", "recall", byTokens, nil, true)
	}
	return out
}

func recallKs2f() []float64 {
	out := make([]float64, len(recallKs))
	for i, k := range recallKs {
		out[i] = float64(k)
	}
	return out
}

// lineChart draws series on axes with y in [0, 1]. xTicks, when given, are
// the x tick positions; otherwise ticks are derived from the data. With logX
// the x axis is logarithmic.
func lineChart(title, xLabel, yLabel string, ss []series, xTicks []float64, logX bool) string {
	a := newAxes(ss, xTicks, logX)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH, chartW, chartH)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", chartW, chartH)
	fmt.Fprintf(&b, `<text x="%g" y="22" text-anchor="middle" font-size="14">%s</text>`+"\n", chartLeft+chartPW/2, esc(title))
	a.drawGrid(&b, xTicks)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%s</text>`+"\n", chartLeft+chartPW/2, chartH-12, esc(xLabel))
	fmt.Fprintf(&b, `<text x="16" y="%g" text-anchor="middle" transform="rotate(-90 16 %g)">%s</text>`+"\n", chartTop+chartPH/2, chartTop+chartPH/2, esc(yLabel))
	// Drawn last to first so the first series (engram) lies on top where
	// lines coincide; baselines are dashed so both stay visible.
	for i := len(ss) - 1; i >= 0; i-- {
		a.drawSeries(&b, i, ss[i])
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// The size of a line chart and of its margins around the plot area, in
// pixels.
const (
	chartW, chartH                               = 640.0, 400.0
	chartLeft, chartRight, chartTop, chartBottom = 60.0, 130.0, 40.0, 50.0
	chartPW, chartPH                             = chartW - chartLeft - chartRight, chartH - chartTop - chartBottom
)

// axes maps a line chart's values to pixels: x (its log with logX) spans
// minX..maxX, y spans 0..1.
type axes struct {
	logX       bool
	minX, maxX float64
}

// newAxes fits the x axis to the points of ss and to xTicks: whole
// decades with logX, else from 0 when ticks are given.
func newAxes(ss []series, xTicks []float64, logX bool) axes {
	a := axes{logX: logX, minX: math.Inf(1), maxX: math.Inf(-1)}
	for _, s := range ss {
		for _, p := range s.pts {
			a.minX = math.Min(a.minX, a.tx(p[0]))
			a.maxX = math.Max(a.maxX, a.tx(p[0]))
		}
	}
	for _, t := range xTicks {
		a.minX = math.Min(a.minX, a.tx(t))
		a.maxX = math.Max(a.maxX, a.tx(t))
	}
	if math.IsInf(a.minX, 0) {
		a.minX, a.maxX = 0, 1
	}
	if logX {
		a.minX, a.maxX = math.Floor(a.minX), math.Ceil(a.maxX)
	} else if !logX && len(xTicks) > 0 {
		a.minX = 0
	}
	if a.maxX <= a.minX {
		a.maxX = a.minX + 1
	}
	return a
}

func (a axes) tx(x float64) float64 {
	if a.logX {
		return math.Log10(x)
	}
	return x
}

func (a axes) px(x float64) float64 {
	return chartLeft + (a.tx(x)-a.minX)/(a.maxX-a.minX)*chartPW
}

func (a axes) py(y float64) float64 { return chartTop + (1-y)*chartPH }

// drawGrid draws the y grid at every 0.2, the x grid at xTicks (at 1, 2
// and 5 of every decade with logX) with their labels, and the frame.
func (a axes) drawGrid(b *strings.Builder, xTicks []float64) {
	for i := 0; i <= 5; i++ {
		y := float64(i) / 5
		fmt.Fprintf(b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", chartLeft, a.py(y), chartLeft+chartPW, a.py(y))
		fmt.Fprintf(b, `<text x="%g" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n", chartLeft-6, a.py(y), strconv.FormatFloat(y, 'f', 1, 64))
	}
	ticks := xTicks
	if a.logX {
		ticks = nil
		for e := a.minX; e <= a.maxX; e++ {
			for _, m := range []float64{1, 2, 5} {
				v := m * math.Pow(10, e)
				if math.Log10(v) <= a.maxX+1e-9 {
					ticks = append(ticks, v)
				}
			}
		}
	}
	for _, t := range ticks {
		x := a.px(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#eee"/>`+"\n", x, chartTop, x, chartTop+chartPH)
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="middle">%s</text>`+"\n", x, chartTop+chartPH+16, strconv.FormatFloat(t, 'f', -1, 64))
	}
	fmt.Fprintf(b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#333"/>`+"\n", chartLeft, chartTop, chartPW, chartPH)
}

// drawSeries draws the i-th series, its line (dashed but for the first),
// its points with their values as tooltips and its legend entry.
func (a axes) drawSeries(b *strings.Builder, i int, s series) {
	color := systemColors[s.name]
	if color == "" {
		color = "#000"
	}
	dash := ""
	if i > 0 {
		dash = ` stroke-dasharray="6 4"`
	}
	var pts []string
	for _, p := range s.pts {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", a.px(p[0]), a.py(p[1])))
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`+"\n", color, dash, strings.Join(pts, " "))
	for _, p := range s.pts {
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s: (%s, %.3f)</title></circle>`+"\n",
			a.px(p[0]), a.py(p[1]), color, esc(s.name), strconv.FormatFloat(p[0], 'f', -1, 64), p[1])
	}
	ly := chartTop + 10 + float64(i)*18
	fmt.Fprintf(b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"%s/>`+"\n", chartLeft+chartPW+12, ly, chartLeft+chartPW+32, ly, color, dash)
	fmt.Fprintf(b, `<text x="%g" y="%g" dominant-baseline="middle">%s</text>`+"\n", chartLeft+chartPW+38, ly, esc(s.name))
}

func esc(s string) string { return html.EscapeString(s) }
