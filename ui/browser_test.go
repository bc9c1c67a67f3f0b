package ui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// bulkMemories is the size of the scope the pages are timed on.
const bulkMemories = 10000

// TestBrowser drives Debian's chromium headless through every page of the
// dashboard served by a real engram serve (the built binary, with API
// keys) over seeded data: no page logs a console error or throws, the
// search playground finds the expected hit with its explanation bars,
// rollback changes a memory and shows in its history, purge removes a
// user; each page's time to interactive is measured on a scope of 10k
// memories and a screenshot of each page is written to ENGRAM_UI_SHOTS
// (default a temporary directory).
func TestBrowser(t *testing.T) {
	chrome := findChromium(t)
	if testing.Short() {
		t.Skip("drives a browser over 10k memories; not with -short")
	}
	shots := os.Getenv("ENGRAM_UI_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	} else if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := startServer(t, false)
	ids := seed(t, srv)

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()

	// The first Run starts the browser; its context carries no timeout (a
	// timeout would stop the browser), the steps' contexts do.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	var mu sync.Mutex
	var problems []string
	consoleCtx, stopConsole := context.WithCancel(ctx)
	consoleDone := make(chan struct{})
	go func() {
		defer close(consoleDone)
		for m, err := range chromedp.Console(consoleCtx) {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning || m.IsException() {
				mu.Lock()
				problems = append(problems, m.String()+" "+m.URL)
				mu.Unlock()
			}
		}
	}()
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
				_ = os.WriteFile(filepath.Join(shots, "failed.png"), png, 0o644)
			}
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%s: %v (browser console: %q)", what, err, problems)
		}
	}
	value := func(what string, a chromedp.Action[string]) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		v, err := chromedp.Run(sctx, a)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
	count := func(css string) int {
		t.Helper()
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, css)))
		if err != nil {
			t.Fatalf("count %s: %v", css, err)
		}
		return n
	}
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// open loads a page afresh (a new document, so the time measured is
	// from navigation start to the page rendered with its data) and waits
	// until it is rendered.
	open := func(name, hash string) timing {
		t.Helper()
		run("open "+hash, chromedp.Navigate("about:blank"), chromedp.Navigate(srv.url+"/ui/"+hash),
			chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`main[data-page=%q]`, name))))
		ms, err := chromedp.Run(ctx, chromedp.Evaluate[timing](`({load: Number(document.getElementById("main").dataset.readyAt), route: Number(document.getElementById("main").dataset.renderMs)})`))
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}

	run("sign-in page", chromedp.Navigate(srv.url+"/ui/"), chromedp.WaitVisible(chromedp.CSS(`#key`)))
	shot("signin")
	run("sign in", chromedp.SendKeys(chromedp.CSS(`#key`), srv.key), chromedp.Click(chromedp.CSS(`#signin-submit`)),
		chromedp.WaitVisible(chromedp.CSS(`main[data-page="scopes"] #scopes`)))

	timings := map[string]timing{}
	for _, p := range []struct{ name, hash string }{
		{"scopes", "#/scopes"},
		{"memories", "#/memories?user=bulk"},
		{"search", "#/search?user=bulk"},
		{"memory", "#/memory/" + ids.bulkOne + "?user=bulk"},
		{"timeline", "#/timeline?user=bulk"},
		{"graph", "#/graph?user=alice"},
		{"jobs", "#/jobs?user=bulk"},
		{"audit", "#/audit?user=bulk"},
		{"purge", "#/purge"},
	} {
		// The best of three loads: the machine's other work only adds.
		best := open(p.name, p.hash)
		for range 2 {
			if m := open(p.name, p.hash); m.Route < best.Route {
				best = m
			}
		}
		timings[p.name] = best
		// Every control of the page has an accessible name.
		if bare := value("labels of "+p.name, chromedp.Evaluate[string](unlabelledJS)); bare != "" {
			t.Errorf("page %s has controls without an accessible name: %s", p.name, bare)
		}
	}
	// The route's time (its module loaded, its API calls answered, its
	// DOM built) must stay within 300 ms (ENGRAM_UI_ROUTE_MS); the time
	// from navigation start, which adds the browser's own start of a
	// document, is checked against ENGRAM_UI_BUDGET_MS when set (a loaded
	// CI machine varies too much).
	routeBudget, loadBudget := 300.0, 0.0
	if s := os.Getenv("ENGRAM_UI_ROUTE_MS"); s != "" {
		fmt.Sscan(s, &routeBudget)
	}
	if s := os.Getenv("ENGRAM_UI_BUDGET_MS"); s != "" {
		fmt.Sscan(s, &loadBudget)
	}
	for _, name := range slices.Sorted(maps.Keys(timings)) {
		ms := timings[name]
		t.Logf("page %-8s interactive %4.0f ms after navigation start, its route %4.0f ms (scope of %d memories)", name, ms.Load, ms.Route, bulkMemories)
		if ms.Route > routeBudget {
			t.Errorf("page %s took %.0f ms from route to rendered, over %.0f ms (ENGRAM_UI_ROUTE_MS)", name, ms.Route, routeBudget)
		}
		if loadBudget > 0 && ms.Load > loadBudget {
			t.Errorf("page %s was interactive %.0f ms after navigation start, over ENGRAM_UI_BUDGET_MS=%.0f", name, ms.Load, loadBudget)
		}
	}
	// A search over the 10k memories, timed by the page itself.
	open("search", "#/search?user=bulk&q=note+4242")
	t.Logf("search playground: %s", value("bulk search", chromedp.Text(chromedp.CSS(`#search-summary`))))
	if first := value("bulk hit", chromedp.Text(chromedp.CSS(`#hits > li:first-child .hit-title`))); first != "bulk note 4242" {
		t.Errorf("first hit of note 4242 = %q, want bulk note 4242", first)
	}
	open("memories", "#/memories?user=bulk")
	if rows := count("#memories tbody tr"); rows != 50 {
		t.Errorf("memories page shows %d rows of the 10k scope, want a page of 50", rows)
	}
	// Bulk soft delete of two memories after the confirmation.
	run("bulk delete", chromedp.Click(chromedp.CSS(`#memories tbody tr:nth-child(1) input`)), chromedp.Click(chromedp.CSS(`#memories tbody tr:nth-child(2) input`)),
		chromedp.Click(chromedp.CSS(`#bulk-delete`)), chromedp.WaitVisible(chromedp.CSS(`#confirm-ok`)), chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.Poll[chromedp.Void](`document.getElementById("status").textContent === "Deleted 2 memories."`))
	if n := srv.scopeCount(t, "bulk"); n != bulkMemories-2 {
		t.Errorf("bulk holds %d active memories after deleting two in the page, want %d", n, bulkMemories-2)
	}

	// Every page of alice's scope, with a screenshot.
	open("scopes", "#/scopes")
	shot("scopes")
	open("memories", "#/memories?user=alice")
	shot("memories")
	// The metadata filter keeps the one memory with source onboarding.
	run("metadata filter", chromedp.SendKeys(chromedp.CSS(`#f-meta`), "source=onboarding"), chromedp.Click(chromedp.CSS(`#f-apply`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#memories tbody tr").length === 1`))
	if got := value("filtered memories", chromedp.Text(chromedp.CSS(`#memories tbody`))); !strings.Contains(got, "Alice: favourite colour") {
		t.Errorf("memories with metadata source=onboarding = %q, want alice's favourite colour only", got)
	}
	open("timeline", "#/timeline?user=alice")
	if count("#timeline li.closed") == 0 {
		t.Errorf("timeline shows no closed fact; alice's superseded colour should be")
	}
	shot("timeline")
	open("graph", "#/graph?user=alice")
	if n := count("#graph-edges tbody a"); n == 0 {
		t.Errorf("graph page lists no relations for alice")
	}
	run("graph layout", chromedp.WaitVisible(chromedp.CSS(`#graph-canvas[data-settled]`)))
	shot("graph")
	// Recentre on the first entity of the table.
	run("graph around an entity", chromedp.Click(chromedp.CSS(`#graph-edges tbody a`)),
		chromedp.WaitVisible(chromedp.CSS(`#graph-summary a`)))
	// The layout alone at 2,000 nodes and 1,000 relations: the longest
	// frame (simulation steps plus a full redraw of a canvas) shows whether
	// the page stays responsive (TestBrowser_Graph2000 times the page
	// itself over a seeded graph).
	var frames struct {
		Max    float64 `json:"max"`
		Work   float64 `json:"work"`
		Frames int     `json:"frames"`
		Total  float64 `json:"total"`
	}
	ev, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
		const { layout } = await import("./pages/graph.js");
		const nodes = Array.from({ length: 2000 }, (_, i) => ({ id: "n" + i, mentions: 1 + (i % 7) }));
		const edges = Array.from({ length: 1000 }, (_, i) => ({ s: i % 2000, t: (i * 7 + 13) % 2000, weight: 1 }));
		const cv = document.createElement("canvas"); cv.width = 1160; cv.height = 700;
		const c = cv.getContext("2d");
		const draw = () => { c.clearRect(0, 0, 1160, 700); for (const e of edges) { c.beginPath(); c.moveTo(nodes[e.s].x, nodes[e.s].y); c.lineTo(nodes[e.t].x, nodes[e.t].y); c.stroke(); } for (const p of nodes) { c.beginPath(); c.arc(p.x, p.y, 3, 0, 6.283); c.fill(); } };
		const t0 = performance.now();
		let last = t0, max = 0, frames = 0;
		const stats = {};
		await new Promise((done) => layout(nodes, edges, 1160, 700, () => { const now = performance.now(); max = Math.max(max, now - last); last = now; frames++; draw(); }, done, stats));
		return JSON.stringify({ max, work: stats.maxWork, frames, total: performance.now() - t0 });
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("layout at 2,000 nodes: %v", err)
	}
	if err := json.Unmarshal([]byte(ev), &frames); err != nil {
		t.Fatal(err)
	}
	t.Logf("graph layout at 2,000 nodes and 1,000 relations: %d frames in %.0f ms; longest frame's work %.0f ms, longest gap between frames %.0f ms", frames.Frames, frames.Total, frames.Work, frames.Max)
	// A frame aims at 12 ms of simulation plus the redraw; the bound is
	// loose because a loaded machine stretches any one frame.
	if frames.Work > 1000 {
		t.Errorf("graph layout at 2,000 nodes holds the page for %.0f ms in one frame, want well under a second", frames.Work)
	}
	open("jobs", "#/jobs?user=alice")
	shot("jobs")
	open("audit", "#/audit?user=alice")
	shot("audit")

	// The search playground finds the greyhound, with bars.
	open("search", "#/search?user=alice")
	run("search", chromedp.SendKeys(chromedp.CSS(`#s-q`), "greyhound Biscuit"), chromedp.SetValue(chromedp.CSS(`#s-budget`), "200"),
		chromedp.Click(chromedp.CSS(`#s-run`)), chromedp.WaitVisible(chromedp.CSS(`#context`)))
	first := value("first hit", chromedp.Text(chromedp.CSS(`#hits > li:first-child .hit-title`)))
	if !strings.Contains(first, "greyhound") {
		t.Errorf("first hit = %q, want the greyhound memory", first)
	}
	if hits := value("hits", chromedp.Text(chromedp.CSS(`#hits`))); !strings.Contains(hits, "I adopted a greyhound named Biscuit last week.") {
		t.Errorf("hits = %q, want alice's greyhound turn among them", hits)
	}
	if ctxt := value("context", chromedp.Text(chromedp.CSS(`#context`))); !strings.Contains(ctxt, "Biscuit") {
		t.Errorf("assembled context = %q, want the hits' lines", ctxt)
	}
	if count("#hits .bar") == 0 {
		t.Errorf("no explanation bars under the hits")
	}
	shot("search")

	// Rollback: colour v2 (blue) back to v1 (green), shown in history.
	open("memory", "#/memory/"+ids.colour+"?user=alice")
	shot("memory")
	if got := value("value before", chromedp.Text(chromedp.CSS(`#memory-value`))); got != colourV2 {
		t.Errorf("memory page shows %q, want the current %q", got, colourV2)
	}
	run("rollback", chromedp.Click(chromedp.CSS(`button[data-version="1"]`)), chromedp.WaitVisible(chromedp.CSS(`#confirm-ok`)),
		chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#history > li").length === 3`))
	if got := value("value after", chromedp.Text(chromedp.CSS(`#memory-value`))); got != colourV1 {
		t.Errorf("after rollback the page shows %q, want %q", got, colourV1)
	}
	if m := srv.get(t, "/v1/memories/"+ids.colour+"?org=acme&project=app&user=alice"); m["value"] != colourV1 {
		t.Errorf("stored value after rollback = %v, want %q", m["value"], colourV1)
	}

	// Purge bob with the typed confirmation.
	open("purge", "#/purge?user=bob")
	run("purge", chromedp.Click(chromedp.CSS(`#p-run`)), chromedp.WaitVisible(chromedp.CSS(`#confirm-typed`)),
		chromedp.SendKeys(chromedp.CSS(`#confirm-typed`), "bob"), chromedp.Click(chromedp.CSS(`#confirm-ok`)),
		chromedp.WaitVisible(chromedp.CSS(`#purge-result p`)))
	result := value("purge result", chromedp.Text(chromedp.CSS(`#purge-result`)))
	if !strings.Contains(result, "Purged bob: 0 episodes, 2 memories") {
		t.Errorf("purge result = %q, want the counts removed (0 episodes, 2 memories)", result)
	}
	shot("purge")
	if n := srv.scopeCount(t, "bob"); n != 0 {
		t.Errorf("bob still holds %d memories after the purge", n)
	}

	// Phone width: every page fits 390 px without scrolling sideways (wide
	// tables scroll inside their box), with a screenshot.
	run("phone", chromedp.EmulateViewport(390, 844))
	for _, p := range []struct{ name, hash string }{
		{"scopes", "#/scopes"},
		{"memories", "#/memories?user=alice"},
		{"search", "#/search?user=alice&q=greyhound"},
		{"memory", "#/memory/" + ids.colour + "?user=alice"},
		{"timeline", "#/timeline?user=alice"},
		{"graph", "#/graph?user=alice"},
		{"jobs", "#/jobs?user=alice"},
		{"audit", "#/audit?user=alice"},
		{"purge", "#/purge"},
	} {
		open(p.name, p.hash)
		if p.name == "graph" {
			run("graph layout at phone width", chromedp.WaitVisible(chromedp.CSS(`#graph-canvas[data-settled]`)))
		}
		if wide := value("width of "+p.name, chromedp.Evaluate[string](`(() => { const w = document.documentElement.scrollWidth; return w > window.innerWidth ? String(w) : ""; })()`)); wide != "" {
			t.Errorf("page %s is %s px wide at a phone's 390 px", p.name, wide)
		}
		shot(p.name + "-phone")
	}

	stopConsole()
	<-consoleDone
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("browser: %s", p)
	}
	t.Logf("screenshots in %s", shots)
}

// Without API keys (--no-auth on loopback) the front door leads to the
// tenants that hold memories; a click opens one, another a user's
// memories, with nothing typed. With keys the same door asks for a key
// first and lists nothing.
func TestBrowser_NoAuth(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t, true)
	carol := map[string]any{"org": "acme", "project": "app", "user": "carol"}
	srv.call(t, "POST", "/v1/memories", map[string]any{"namespace": carol, "memories": []map[string]any{{"value": "Carol fährt Rad"}}})
	dan := map[string]any{"org": "globex", "project": "web", "user": "dan"}
	srv.call(t, "POST", "/v1/memories", map[string]any{"namespace": dan, "memories": []map[string]any{{"value": "Dan 喜欢茶"}}})

	ctx := browser(t, chrome)
	sctx, cancelS := context.WithTimeout(ctx, time.Minute)
	defer cancelS()
	err := chromedp.Do(sctx, chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(chromedp.CSS(`main[data-page="tenants"] #tenants`)))
	if err != nil {
		t.Fatalf("open / without a key: %v", err)
	}
	text, err := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(`#tenants tbody`)))
	if err != nil || !strings.Contains(text, "acme / app") || !strings.Contains(text, "globex / web") {
		t.Fatalf("tenants = %q, %v; want acme / app and globex / web", text, err)
	}
	if n, err := chromedp.Run(sctx, chromedp.Evaluate[int](`document.querySelectorAll("#key").length`)); err != nil || n != 0 {
		t.Errorf("a server without keys asks for a key (%d fields, %v)", n, err)
	}
	err = chromedp.Do(sctx, chromedp.Click(chromedp.CSS(`#tenants tbody tr:first-child a.tenant`)),
		chromedp.WaitVisible(chromedp.CSS(`main[data-page="scopes"] #scopes`)),
		chromedp.Click(chromedp.CSS(`#scopes tbody tr:first-child td:first-child a`)),
		chromedp.WaitVisible(chromedp.CSS(`main[data-page="memories"] #memories`)),
		chromedp.Poll[chromedp.Void](`document.querySelector("#memories tbody").textContent.includes("Carol fährt Rad")`))
	if err != nil {
		text, _ := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(`main`)))
		t.Fatalf("from the tenants to carol's memories: %v (page: %q)", err, text)
	}
	// A user of the tenant with nothing says so, rather than "no match".
	err = chromedp.Do(sctx, chromedp.Navigate(srv.url+"/ui/#/memories?user=nobody"),
		chromedp.Poll[chromedp.Void](`(document.getElementById("memories-empty") || {textContent: ""}).textContent.includes("holds nothing")`))
	if err != nil {
		text, _ := chromedp.Run(sctx, chromedp.Text(chromedp.CSS(`main`)))
		t.Fatalf("the memories of a user with none: %v (page: %q)", err, text)
	}
}

// TestBrowser_FrontDoorKeys: with API keys, / leads to the sign-in page,
// which asks for a key and lists no tenant.
func TestBrowser_FrontDoorKeys(t *testing.T) {
	chrome := findChromium(t)
	srv := startServer(t, false)
	ctx := browser(t, chrome)
	sctx, cancelS := context.WithTimeout(ctx, time.Minute)
	defer cancelS()
	if err := chromedp.Do(sctx, chromedp.Navigate(srv.url+"/"), chromedp.WaitVisible(chromedp.CSS(`main[data-page="signin"] #key`))); err != nil {
		t.Fatalf("open / with keys: %v", err)
	}
	if n, err := chromedp.Run(sctx, chromedp.Evaluate[int](`document.querySelectorAll("#tenants").length`)); err != nil || n != 0 {
		t.Errorf("the sign-in page lists tenants (%d, %v)", n, err)
	}
}

// browser starts headless chromium for a test and returns its context.
func browser(t *testing.T, chrome string) context.Context {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.DisableGPU)...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// findChromium returns chromium's path, skipping the test without it
// unless ENGRAM_REQUIRE_CHROMIUM=1.
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("ENGRAM_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("chromium is not installed and ENGRAM_REQUIRE_CHROMIUM=1 (apt-get install -y chromium)")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium; ENGRAM_REQUIRE_CHROMIUM=1 makes this a failure)")
	return ""
}

// timing is when a page was rendered with its data: ms after navigation
// start, and ms its route took.
type timing struct {
	Load  float64 `json:"load"`
	Route float64 `json:"route"`
}

// server is a running engram serve with an admin key of acme/app.
type server struct {
	url, key string
}

// startServer builds the engram command (or takes ENGRAM_BIN) and serves
// a fresh data directory with API keys, without the embedding model
// (BM25 and time are enough for the pages). Each prepare function gets the
// data directory before the server opens it (to seed it directly).
func startServer(t *testing.T, noAuth bool, prepare ...func(data string)) *server {
	t.Helper()
	bin := os.Getenv("ENGRAM_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "engram")
		out, err := exec.Command("go", "build", "-o", bin, "../cmd/engram").CombinedOutput()
		if err != nil {
			t.Fatalf("build engram: %v\n%s", err, out)
		}
	}
	data := t.TempDir()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data", data, "--embedder", "none", "--rate-limit", "0", "--max-concurrent", "0"}
	var key []byte
	if noAuth {
		args = append(args, "--no-auth")
	} else {
		var err error
		if key, err = exec.Command(bin, "keys", "create", "--data", data, "--org", "acme", "--project", "app", "--role", "admin").Output(); err != nil {
			t.Fatalf("keys create: %v", err)
		}
	}
	for _, p := range prepare {
		p(data)
	}
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`listening on (http://[^\s"]+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case u := <-found:
		return &server{url: u, key: strings.TrimSpace(string(key))}
	case <-time.After(60 * time.Second):
		t.Fatal("engram serve did not start in 60s")
	}
	return nil
}

func (s *server) call(t *testing.T, method, path string, body any) []byte {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if s.key != "" {
		req.Header.Set("Authorization", "Bearer "+s.key)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
	return out
}

func (s *server) get(t *testing.T, path string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.call(t, "GET", path, nil), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// scopeCount is the active memories of user's scopes by GET /v1/scopes.
func (s *server) scopeCount(t *testing.T, user string) int {
	t.Helper()
	var res struct {
		Scopes []struct {
			Namespace struct{ User string }
			Memories  int
		}
	}
	if err := json.Unmarshal(s.call(t, "GET", "/v1/scopes", nil), &res); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range res.Scopes {
		if c.Namespace.User == user {
			n += c.Memories
		}
	}
	return n
}

const (
	colourV1 = "Alice's favourite colour is green"
	colourV2 = "Alice's favourite colour is blue"
)

type seeded struct{ colour, bulkOne string }

// seed stores alice's conversation (English, German, Spanish, Chinese), a
// memory with two versions and a superseded fact, two memories of bob and
// 10k memories of user bulk.
func seed(t *testing.T, s *server) seeded {
	t.Helper()
	alice := map[string]any{"org": "acme", "project": "app", "user": "alice"}
	s.call(t, "POST", "/v1/episodes", map[string]any{"namespace": alice, "episodes": []map[string]any{
		{"role": "user", "speaker": "Alice", "content": "I adopted a greyhound named Biscuit last week.", "occurred_at": "2026-03-02T10:00:00Z"},
		{"role": "assistant", "speaker": "assistant", "content": "Congratulations on Biscuit!", "occurred_at": "2026-03-02T10:00:05Z"},
		{"role": "user", "speaker": "Alice", "content": "Ich wohne jetzt in München.", "occurred_at": "2026-03-02T10:01:00Z"},
		{"role": "user", "speaker": "Alice", "content": "Me gusta el café con leche.", "occurred_at": "2026-03-02T10:02:00Z"},
		{"role": "user", "speaker": "Alice", "content": "我喜欢喝绿茶。", "occurred_at": "2026-03-02T10:03:00Z"},
		{"role": "user", "speaker": "Alice", "content": "I went to Paris with Bob and Carol.", "occurred_at": "2026-03-03T09:00:00Z"},
	}})
	var added struct {
		Memories []struct{ ID string } `json:"memories"`
	}
	if err := json.Unmarshal(s.call(t, "POST", "/v1/memories", map[string]any{"namespace": alice, "memories": []map[string]any{
		{"value": colourV1, "abstraction": "Alice: favourite colour", "kind": "semantic", "cues": []string{"colour"}, "metadata": map[string]any{"source": "onboarding"}},
		{"value": "Alice works at Initech", "abstraction": "Alice: employer", "kind": "semantic", "valid_from": "2025-01-01T00:00:00Z"},
	}}), &added); err != nil || len(added.Memories) != 2 {
		t.Fatalf("add alice's memories: %v", err)
	}
	colour := added.Memories[0].ID
	q := "?org=acme&project=app&user=alice"
	s.call(t, "PATCH", "/v1/memories/"+colour+q, map[string]any{"value": colourV2})
	s.call(t, "POST", "/v1/memories/"+added.Memories[1].ID+"/supersede"+q, map[string]any{
		"new": map[string]any{"value": "Alice works at Globex", "abstraction": "Alice: employer", "kind": "semantic"}, "at": "2026-02-01T00:00:00Z"})
	bob := map[string]any{"org": "acme", "project": "app", "user": "bob"}
	s.call(t, "POST", "/v1/memories", map[string]any{"namespace": bob, "memories": []map[string]any{{"value": "Bob likes chess"}, {"value": "Bob lives in Lyon"}}})

	bulk := map[string]any{"org": "acme", "project": "app", "user": "bulk"}
	var one string
	for start := 0; start < bulkMemories; start += 1000 {
		ms := make([]map[string]any, 0, 1000)
		for i := start; i < start+1000; i++ {
			ms = append(ms, map[string]any{"value": fmt.Sprintf("note %d about project %d and topic %d", i, i%37, i%101), "abstraction": fmt.Sprintf("bulk note %d", i), "cues": []string{fmt.Sprintf("topic %d", i%101)}})
		}
		var res struct {
			Memories []struct{ ID string } `json:"memories"`
		}
		if err := json.Unmarshal(s.call(t, "POST", "/v1/memories", map[string]any{"namespace": bulk, "memories": ms}), &res); err != nil {
			t.Fatal(err)
		}
		if one == "" {
			one = res.Memories[0].ID
		}
	}
	return seeded{colour: colour, bulkOne: one}
}

// unlabelledJS lists the page's form controls and buttons that have no
// accessible name (no label, aria-label, aria-labelledby, title or text).
const unlabelledJS = `[...document.querySelectorAll("main input, main select, main textarea, main button, main canvas, dialog input, dialog button")]
	.filter((el) => !(el.labels && el.labels.length) && !el.getAttribute("aria-label") && !el.getAttribute("aria-labelledby") && !el.title && !(el.textContent || "").trim())
	.map((el) => el.outerHTML.slice(0, 100)).join(" | ")`
