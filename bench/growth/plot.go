package main

import (
	"fmt"
	"math"
	"strings"
)

// Plot geometry: two panels side by side, each with log-scaled axes.
const (
	panelW, panelH = 420, 300
	marginL        = 60
	marginT        = 40
	marginB        = 50
	gap            = 80
)

var colours = map[string]string{"sqlite": "#1f77b4", "postgres": "#d62728"}

// series is one line of a panel: points of one backend and shape.
type series struct {
	label  string
	colour string
	dashed bool
	dotted bool
	xs, ys []float64
	marker string // "circle" or "diamond"
}

// panel is one chart: its title, y-axis unit and lines.
type panel struct {
	title, unit string
	lines       []series
}

// legend explains the styles of both panels.
var legend = []string{
	"blue: SQLite; red: PostgreSQL. Circles: one namespace; diamonds: tenants of 100 memories each, at their total.",
	"Left: solid p50, dashed p95, dotted CPU time per search (what other jobs on the machine do not inflate).",
	"Right: solid Go heap in use after a collection, dashed resident set of the benchmark process (not PostgreSQL's).",
}

// plot draws latency (left) and memory (right) against the number of
// memories: lines for one namespace, diamonds for the many-tenant corpus
// (placed at its total number of memories).
func plot(ps []Point) []byte {
	lat := panel{title: "search latency, query embedding excluded", unit: "ms"}
	mem := panel{title: "process memory after the searches", unit: "MiB"}
	for _, b := range []string{"sqlite", "postgres"} {
		for _, shape := range []string{"1ns", "tenants"} {
			var x, p50, p95, cpu, heap, rss []float64
			for _, p := range ps {
				if p.Backend == b && p.Shape == shape {
					x = append(x, float64(p.Memories))
					p50, p95, cpu = append(p50, p.P50Ms), append(p95, p.P95Ms), append(cpu, p.CPUMsPerQ)
					heap, rss = append(heap, p.HeapInUseMB), append(rss, p.RSSMB)
				}
			}
			if len(x) == 0 {
				continue
			}
			name, marker := b, "circle"
			if shape == "tenants" {
				name, marker = b+" (tenants)", "diamond"
			}
			c := colours[b]
			lat.lines = append(lat.lines,
				series{label: name + " p50", colour: c, xs: x, ys: p50, marker: marker},
				series{label: name + " p95", colour: c, dashed: true, xs: x, ys: p95, marker: marker},
				series{label: name + " CPU per search", colour: c, dotted: true, xs: x, ys: cpu, marker: marker})
			mem.lines = append(mem.lines,
				series{label: name + " heap", colour: c, xs: x, ys: heap, marker: marker},
				series{label: name + " RSS", colour: c, dashed: true, xs: x, ys: rss, marker: marker})
		}
	}
	var s strings.Builder
	w, h := 2*(marginL+panelW)+gap+40, marginT+panelH+marginB+len(legend)*18+10
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&s, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	xmin, xmax := bounds(ps, func(p Point) float64 { return float64(p.Memories) })
	drawPanel(&s, lat, marginL, xmin, xmax)
	drawPanel(&s, mem, 2*marginL+panelW+gap, xmin, xmax)
	for i, l := range legend {
		fmt.Fprintf(&s, `<text x="%d" y="%d">%s</text>`+"\n", marginL, marginT+panelH+marginB+i*18, esc(l))
	}
	s.WriteString("</svg>\n")
	return []byte(s.String())
}

// bounds returns the decades around the smallest and largest value of f.
func bounds(ps []Point, f func(Point) float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range ps {
		if v := f(p); v > 0 {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return 1, 10
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

func drawPanel(s *strings.Builder, p panel, left int, xmin, xmax float64) {
	ymin, ymax := math.Inf(1), math.Inf(-1)
	for _, l := range p.lines {
		for _, y := range l.ys {
			if y > 0 {
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	if math.IsInf(ymin, 1) {
		ymin, ymax = 1, 10
	}
	ymin, ymax = math.Pow(10, math.Floor(math.Log10(ymin))), math.Pow(10, math.Ceil(math.Log10(ymax)))
	if ymax <= ymin {
		ymax = ymin * 10
	}
	px := func(x float64) float64 {
		return float64(left) + panelW*(math.Log10(x)-math.Log10(xmin))/(math.Log10(xmax)-math.Log10(xmin))
	}
	py := func(y float64) float64 {
		y = math.Max(y, ymin)
		return marginT + panelH - panelH*(math.Log10(y)-math.Log10(ymin))/(math.Log10(ymax)-math.Log10(ymin))
	}
	fmt.Fprintf(s, `<text x="%d" y="%d" font-weight="bold">%s</text>`+"\n", left, marginT-15, esc(p.title))
	fmt.Fprintf(s, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", left, marginT, panelW, panelH)
	for x := xmin; x <= xmax*1.0001; x *= 10 {
		fmt.Fprintf(s, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", px(x), marginT, px(x), marginT+panelH)
		fmt.Fprintf(s, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", px(x), marginT+panelH+16, human(x))
	}
	fmt.Fprintf(s, `<text x="%d" y="%d" text-anchor="middle">memories</text>`+"\n", left+panelW/2, marginT+panelH+34)
	for y := ymin; y <= ymax*1.0001; y *= 10 {
		fmt.Fprintf(s, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", left, py(y), left+panelW, py(y))
		fmt.Fprintf(s, `<text x="%d" y="%.1f" text-anchor="end">%s %s</text>`+"\n", left-4, py(y)+4, human(y), p.unit)
	}
	for _, l := range p.lines {
		var pts []string
		for i := range l.xs {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(l.xs[i]), py(l.ys[i])))
		}
		if len(pts) > 1 {
			fmt.Fprintf(s, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(pts, " "), l.colour, dash(l))
		}
		for i := range l.xs {
			drawMarker(s, l, px(l.xs[i]), py(l.ys[i]))
		}
	}
}

func drawMarker(s *strings.Builder, l series, x, y float64) {
	fill := l.colour
	if l.dashed || l.dotted {
		fill = "white"
	}
	if l.marker == "diamond" {
		fmt.Fprintf(s, `<path d="M%.1f %.1f l5 5 l-5 5 l-5 -5 z" fill="%s" stroke="%s"/>`+"\n", x, y-5, fill, l.colour)
		return
	}
	fmt.Fprintf(s, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s"/>`+"\n", x, y, fill, l.colour)
}

func dash(l series) string {
	switch {
	case l.dashed:
		return ` stroke-dasharray="6 4"`
	case l.dotted:
		return ` stroke-dasharray="2 3"`
	}
	return ""
}

// human writes a power of ten as 1k, 10M, 0.1 and so on.
func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}

func esc(t string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(t)
}
