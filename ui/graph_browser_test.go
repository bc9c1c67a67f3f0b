package ui_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/storeopen"
	"github.com/engramhq/engram/storetest"
)

// graphEntities is the size of the graph the graph page is timed on.
const graphEntities = 2000

// seedGraph stores, in the data directory, graphEntities memories of user
// "graph" and a graph over them: one entity per memory (named by it) and
// graphEntities-1 relations joining them into one tree of 40 clusters, so
// the heaviest 2,000 relations the page asks for reach every entity.
func seedGraph(t *testing.T, data string) {
	t.Helper()
	ctx := context.Background()
	st, err := storeopen.Open(ctx, data, storeopen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, st, engine.Options{CloseStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ns := engram.Namespace{Org: "acme", Project: "app", User: "graph"}
	ms := make([]engram.Memory, graphEntities)
	for i := range ms {
		ms[i] = engram.Memory{Value: fmt.Sprintf("graph note %d", i), Abstraction: fmt.Sprintf("graph note %d", i)}
	}
	var mems []engram.Memory
	for start := 0; start < len(ms); start += 1000 {
		got, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: ms[start:min(start+1000, len(ms))]})
		if err != nil {
			t.Fatal(err)
		}
		mems = append(mems, got...)
	}
	rng := rand.New(rand.NewPCG(18, 2000))
	var recs []any
	ents := make([]*engram.Entity, graphEntities)
	for i := range ents {
		ents[i] = storetest.Entity(ns, fmt.Sprintf("Entity %d", i), engram.EntityThing)
		recs = append(recs, ents[i], engram.Mention{EntityID: ents[i].ID, MemoryID: mems[i].ID, Namespace: ents[i].Namespace, At: time.Now()})
	}
	const cluster = 50
	for i := 1; i < graphEntities; i++ {
		parent := i - 1 - rng.IntN(max(1, i%cluster)) // within the cluster, or the previous cluster's last
		r := storetest.Relation(ents[parent], ents[i], mems[i].ID)
		r.Evidence[0].Weight = 0.05 + 0.95*rng.Float64()
		recs = append(recs, r)
	}
	storetest.PutGraph(t, st, recs...)
}

// graphMetrics is what the graph page's timing script measures.
type graphMetrics struct {
	Nodes, Edges   int
	FirstDraw      float64 // ms from the route's start to the canvas's first drawing
	Frames         int     // frames while the layout ran
	Median, P95    float64 // ms between frames while the layout ran
	Settled        float64 // ms from the route's start to the layout's end
	Click          float64 // ms from a click on a node to its selection drawn
	Ticks          int     // the layout's ticks, the pairs of nodes they compared, and their mean ms
	Pairs          int
	TickMs         float64
	DrawMs         float64 // a drawing's mean ms
	Keys           string  // which of zoom, pan, wheel and focusable worked
	ClickedName    string
	SelectedDetail string
}

// TestBrowser_Graph2000 opens the graph page on a scope of 2,000 entities
// and 1,999 relations in headless chromium and measures, in the page, the
// time to the first drawing, the frame intervals while the layout runs
// (median and 95th percentile) and the time a click on a node takes to be
// handled and drawn, and checks the pairs of nodes a layout tick compares
// stay far below all pairs (the frame times are bounded only loosely: a
// loaded machine stretches them whatever the layout does). A screenshot is written to
// ENGRAM_UI_SHOTS as graph-2000.png.
func TestBrowser_Graph2000(t *testing.T) {
	chrome := findChromium(t)
	if testing.Short() {
		t.Skip("drives a browser over 2,000 entities; not with -short")
	}
	shots := os.Getenv("ENGRAM_UI_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, true, func(data string) { seedGraph(t, data) })
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	sctx, cancelS := context.WithTimeout(ctx, 2*time.Minute)
	defer cancelS()
	if err := chromedp.Do(sctx, chromedp.Navigate(srv.url+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`#org`)),
		chromedp.SendKeys(chromedp.CSS(`#org`), "acme"), chromedp.SendKeys(chromedp.CSS(`#project`), "app"),
		chromedp.Click(chromedp.CSS(`#signin-submit`)), chromedp.WaitVisible(chromedp.CSS(`main[data-page="scopes"] #scopes`))); err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// The script routes to the graph within the same document, having
	// wrapped the canvas's clearRect (each drawing starts with it) and
	// started a frame clock, so the old and the new page are measured
	// alike.
	m, err := chromedp.Run(sctx, chromedp.Evaluate[graphMetrics](graphTimingJS, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("time the graph page: %v", err)
	}
	t.Logf("graph page, %d entities and %d relations: first drawing %.0f ms after the route started; layout settled at %.0f ms over %d frames (%d ticks of %.1f ms comparing %d pairs of nodes each, drawings of %.1f ms on average), frame interval median %.1f ms, p95 %.1f ms; a click on a node handled and drawn in %.1f ms",
		m.Nodes, m.Edges, m.FirstDraw, m.Settled, m.Frames, m.Ticks, m.TickMs, m.Pairs/max(1, m.Ticks), m.DrawMs, m.Median, m.P95, m.Click)
	if m.Nodes < graphEntities {
		t.Errorf("graph page drew %d entities, want all %d of the scope", m.Nodes, graphEntities)
	}
	// Generous bounds: a loaded machine stretches every frame (the 95th
	// percentile was 170-280 ms with 25 processes wanting the 2 cores).
	if m.P95 > 1000 {
		t.Errorf("graph page's frames while the layout runs: p95 %.0f ms apart, want under a second", m.P95)
	}
	if m.Click < 0 || m.Click > 500 {
		t.Errorf("a click on a node took %.0f ms to be handled and drawn, want under 500 ms", m.Click)
	}
	if m.Keys != "zoom pan wheel focusable" {
		t.Errorf("graph canvas: of zoom, pan, wheel and focusable only %q work", m.Keys)
	}
	if m.ClickedName == "" || m.SelectedDetail == "" {
		t.Errorf("a click on a node showed no detail (clicked %q, detail %q)", m.ClickedName, m.SelectedDetail)
	}
	// The frame times alone tell a quadratic tick from a linear one only on
	// a quiet machine (with 25-45 processes wanting the 2 cores, a tick
	// that compared every pair measured a p95 of 230-350 ms, close to the
	// grid's). The pairs of nodes a tick compares do on any: every pair is
	// n(n-1)/2, about 2 million at 2,000 nodes; the grid compares nearby
	// ones only.
	if all := m.Nodes * (m.Nodes - 1) / 2; m.Ticks == 0 || m.Pairs/m.Ticks > all/8 {
		t.Errorf("the layout compared %d pairs of nodes per tick over %d ticks, want under an eighth of all %d pairs", m.Pairs/max(1, m.Ticks), m.Ticks, all)
	}
	png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shots, "graph-2000.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

const graphTimingJS = `(async () => {
	const proto = CanvasRenderingContext2D.prototype, clear = proto.clearRect;
	let firstDraw = 0;
	proto.clearRect = function (...a) { if (!firstDraw) firstDraw = performance.now(); return clear.apply(this, a); };
	const stamps = [];
	let running = true;
	const tick = (ts) => { stamps.push(ts); if (running) requestAnimationFrame(tick); };
	const t0 = performance.now();
	requestAnimationFrame(tick);
	window.location.hash = "#/graph?user=graph";
	const until = async (ok, ms) => { const end = performance.now() + ms; while (!ok()) { if (performance.now() > end) throw new Error("timed out"); await new Promise((r) => setTimeout(r, 20)); } };
	await until(() => document.querySelector("#graph-canvas[data-settled]"), 90000);
	const settled = performance.now();
	running = false;
	proto.clearRect = clear;
	const during = stamps.filter((s) => s >= firstDraw && s <= settled);
	const gaps = during.slice(1).map((s, i) => s - during[i]).sort((a, b) => a - b);
	const q = (p) => gaps.length ? gaps[Math.min(gaps.length - 1, Math.floor(p * gaps.length))] : 0;
	const cv = document.getElementById("graph-canvas");
	const summary = document.getElementById("graph-summary").textContent;
	const counts = summary.match(/(\d+) entities, (\d+) relations/) || [0, 0, 0];
	let click = -1, name = "", detail = "";
	if (cv.graphScreenOf) {
		const [x, y, n] = cv.graphScreenOf(Math.floor(Number(counts[1]) / 2));
		name = n;
		const r = cv.getBoundingClientRect();
		const c0 = performance.now();
		cv.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: r.left + x, clientY: r.top + y }));
		await new Promise((res) => requestAnimationFrame(() => res()));
		click = performance.now() - c0;
		detail = (document.getElementById("graph-selected") || {}).textContent || "";
	}
	const st = cv.graphStats || {};
	// Keys zoom around the centre and pan; a wheel zooms at the pointer.
	const frame = () => new Promise((res) => requestAnimationFrame(() => res()));
	const key = async (k) => { cv.dispatchEvent(new KeyboardEvent("keydown", { key: k, bubbles: true })); await frame(); };
	let keys = "";
	if (cv.graphScreenOf) {
		const d = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1]);
		const i = Math.floor(Number(counts[1]) / 3), mid = [cv.clientWidth / 2, cv.clientHeight / 2];
		const p0 = cv.graphScreenOf(i);
		await key("+");
		const p1 = cv.graphScreenOf(i);
		if (d(p1, mid) > d(p0, mid) * 1.2) keys += "zoom ";
		await key("ArrowLeft");
		const p2 = cv.graphScreenOf(i);
		if (Math.abs(p2[0] - p1[0] - 60) < 1 && p2[1] === p1[1]) keys += "pan ";
		const r = cv.getBoundingClientRect();
		cv.dispatchEvent(new WheelEvent("wheel", { deltaY: 300, clientX: r.left + 10, clientY: r.top + 10, bubbles: true, cancelable: true }));
		await frame();
		const p3 = cv.graphScreenOf(i);
		if (d(p3, [10, 10]) < d(p2, [10, 10]) * 0.9) keys += "wheel ";
		await key("0");
		if (cv.tabIndex === 0) keys += "focusable";
	}
	return { Nodes: Number(counts[1]), Edges: Number(counts[2]), FirstDraw: firstDraw - t0, Frames: during.length,
		Median: q(0.5), P95: q(0.95), Settled: settled - t0, Click: click, ClickedName: name, SelectedDetail: detail, Keys: keys,
		Ticks: st.ticks || 0, Pairs: st.pairs || 0, TickMs: st.ticks ? st.tickMs / st.ticks : 0, DrawMs: st.draws ? st.drawMs / st.draws : 0 };
})()`
