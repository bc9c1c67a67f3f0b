package metrics_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/internal/syncbuf"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/metrics"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/storeopen"

	engramhttp "github.com/engramhq/engram/http"
)

// stack is an engine over a fresh SQLite store served over HTTP, reporting
// to one Metrics, with /metrics mounted as engram serve mounts it.
type stack struct {
	eng  *engine.Engine
	m    *metrics.Metrics
	srv  *httptest.Server
	logs *syncbuf.Buffer
}

func newStack(t *testing.T, opts engine.Options) *stack {
	t.Helper()
	logs := &syncbuf.Buffer{}
	log := slog.New(slog.NewJSONHandler(logs, nil))
	m := metrics.New(log)
	opts.Observer, opts.Logger, opts.AccessFlush = m, slog.New(slog.DiscardHandler), time.Hour
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{
		Logger: log, Observer: m, Ready: eng.Ready,
		Mounts: []engramhttp.Mount{{Pattern: "GET /metrics", Handler: m.Handler(), Role: engram.RoleAdmin}},
	}))
	t.Cleanup(srv.Close)
	return &stack{eng: eng, m: m, srv: srv, logs: logs}
}

// call sends a JSON request and returns the status and body.
func (s *stack) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	code, b, err := s.try(method, path, body)
	if err != nil {
		t.Fatal(err)
	}
	return code, b
}

// try is call for any goroutine: it returns the transport's error.
func (s *stack) try(method, path, body string) (int, string, error) {
	req, err := http.NewRequest(method, s.srv.URL+path, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// scrape reads /metrics in the text format: each series ("name{labels}",
// labels sorted as the format writes them) with its value, and the body.
func (s *stack) scrape(t *testing.T) (map[string]float64, string) {
	t.Helper()
	code, body := s.call(t, "GET", "/metrics", "")
	if code != 200 {
		t.Fatalf("GET /metrics: %d %s", code, body)
	}
	series := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("scrape line %q: %v", line, err)
		}
		series[line[:i]] = v
	}
	return series, body
}

// waitFor scrapes until cond holds, failing after ten seconds.
func (s *stack) waitFor(t *testing.T, what string, cond func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, body := s.scrape(t)
		if cond(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10s; scrape:\n%s", what, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestScrape: after an add through the API, an asynchronous add whose LLM
// formation fails (the rules' provisional memories stand in meanwhile and
// its embed job runs) and two searches, the scrape shows every counter
// moved: requests by route pattern, memory operations by former and
// trigger, search stages and channels, jobs by kind and state, embedder
// and model calls with the failure, the breaker, the runtime and process.
func TestScrape(t *testing.T) {
	chatSrv := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true})
	chatSrv.SetDown(true)
	embSrv := openaitest.NewServer(t, openaitest.Options{Dim: 16})
	var st *stack
	obs := &lateObserver{}
	chat, err := openai.NewChat(openai.Config{BaseURL: chatSrv.URL(), Model: "m1", MaxRetries: -1, Logger: slog.New(slog.DiscardHandler), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	former, err := llmformer.New(llmformer.Config{LLM: chat, CallTimeout: 5 * time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	emb, err := openai.NewEmbedder(openai.Config{BaseURL: embSrv.URL(), Model: "e1", MaxRetries: -1, Logger: slog.New(slog.DiscardHandler), Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	st = newStack(t, engine.Options{Former: former, Provisional: engine.DefaultFormer(), Embedder: emb,
		Workers: 1, JobPoll: 10 * time.Millisecond, JobBackoff: time.Hour})
	obs.m = st.m
	st.m.WatchBreaker(former)
	st.m.WatchBacklog(st.eng.JobBacklog)

	before, _ := st.scrape(t)
	if before[`engram_http_requests_total{method="POST",route="/v1/search",status="200"}`] != 0 {
		t.Fatalf("searches counted before any")
	}
	if code, body := st.call(t, "POST", "/v1/memories", `{"namespace":{"org":"acme","project":"demo","user":"ann"},"memories":[{"value":"Ann's locker code is 4711."}]}`); code != 201 {
		t.Fatalf("add memory: %d %s", code, body)
	}
	if code, body := st.call(t, "POST", "/v1/episodes", `{"namespace":{"org":"acme","project":"demo","user":"ann"},"async":true,
		"episodes":[{"role":"user","speaker":"Ann","content":"I moved to Lisbon last month and started learning Portuguese."}]}`); code != 202 {
		t.Fatalf("async add: %d %s", code, body)
	}
	for range 2 {
		if code, body := st.call(t, "POST", "/v1/search", `{"scope":{"org":"acme","project":"demo","user":"ann"},"query":"Where does Ann live?"}`); code != 200 {
			t.Fatalf("search: %d %s", code, body)
		}
	}
	got := st.waitFor(t, "failed formation and done embed job", func(s map[string]float64) bool {
		return s[`engram_jobs_total{kind="form",state="retrying"}`] >= 1 && s[`engram_jobs_total{kind="embed",state="done"}`] >= 1
	})
	for series, min := range map[string]float64{
		`engram_http_requests_total{method="POST",route="/v1/search",status="200"}`:            2,
		`engram_http_requests_total{method="POST",route="/v1/episodes",status="202"}`:          1,
		`engram_http_request_duration_seconds_count{method="POST",route="/v1/memories"}`:       1,
		`engram_memory_operations_total{former="none",op="ADD",result="ok",trigger="api"}`:     1,
		`engram_memory_operations_total{former="rules",op="ADD",result="ok",trigger="former"}`: 1,
		`engram_search_stage_duration_seconds_count{stage="gather"}`:                           2,
		`engram_search_stage_duration_seconds_count{stage="rerank"}`:                           2,
		`engram_search_stage_duration_seconds_count{stage="assemble"}`:                         2,
		`engram_search_channel_duration_seconds_count{channel="bm25"}`:                         2,
		`engram_search_channel_duration_seconds_count{channel="dense"}`:                        2,
		`engram_jobs_total{kind="form",state="queued"}`:                                        1,
		`engram_jobs_total{kind="embed",state="queued"}`:                                       1,
		`engram_embedder_calls_total{result="ok"}`:                                             1,
		`engram_llm_calls_total{endpoint="chat/completions",result="unavailable"}`:             1,
		`engram_llm_calls_total{endpoint="embeddings",result="ok"}`:                            1,
		`engram_llm_breaker_failures`:                                                          1,
		`engram_llm_breaker_state{state="closed"}`:                                             1,
		`go_goroutines`:                 1,
		`process_resident_memory_bytes`: 1,
	} {
		if got[series] < min {
			t.Errorf("%s = %v, want at least %v", series, got[series], min)
		}
	}
	if _, ok := got[`engram_jobs_open{kind="embed",state="queued"}`]; !ok || got[`engram_jobs_open{kind="embed",state="queued"}`] != 0 {
		t.Errorf("engram_jobs_open{kind=embed,state=queued} = %v (present %v), want 0 once the embed job is done", got[`engram_jobs_open{kind="embed",state="queued"}`], ok)
	}
	if got[`engram_jobs_total{kind="form",state="done"}`] != 0 {
		t.Errorf("a form job counted done although its model is down")
	}
	checkOpLog(t, st.logs.String())
}

// lateObserver passes model calls on to the stack's Metrics, made after
// the clients.
type lateObserver struct{ m *metrics.Metrics }

func (o *lateObserver) ObserveCall(endpoint string, attempts int, d time.Duration, err error) {
	if o.m != nil {
		o.m.ObserveCall(endpoint, attempts, d, err)
	}
}

// checkOpLog: each memory operation has a JSON line with its memory id,
// operation, trigger, former and result, and the request id of the
// request that caused it; no line holds memory content.
func checkOpLog(t *testing.T, out string) {
	t.Helper()
	reqIDs := map[string]bool{}
	var ops []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON", l)
		}
		switch m["msg"] {
		case "request":
			reqIDs[fmt.Sprint(m["request_id"])] = true
		case "memory operation":
			ops = append(ops, m)
		}
	}
	var api, formed int
	for _, op := range ops {
		if op["memory_id"] == nil || op["operation"] == nil || op["result"] != "ok" || op["org"] != "acme" || op["project"] != "demo" {
			t.Errorf("operation line %v lacks a field", op)
		}
		switch op["trigger"] {
		case "api":
			api++
		case "former":
			formed++
		}
		if id, ok := op["request_id"].(string); ok && !reqIDs[id] {
			t.Errorf("operation line names request %s, which has no line", id)
		}
	}
	if api != 1 || formed == 0 {
		t.Errorf("operation lines: %d by the API, %d by the former; want 1 and some:\n%s", api, formed, out)
	}
	for _, content := range []string{"4711", "locker", "Lisbon", "Portuguese", "Where does"} {
		if strings.Contains(out, content) {
			t.Errorf("the log holds %q", content)
		}
	}
}

// TestSeriesBounded: a thousand tenants each adding and searching leave
// the number of series where one tenant left it, and no tenant, user or
// memory text appears in a scrape.
func TestSeriesBounded(t *testing.T) {
	st := newStack(t, engine.Options{})
	work := func(i int) {
		ns := fmt.Sprintf(`{"org":"tenant%d","project":"proj%d","user":"user%d"}`, i, i, i)
		if code, body, err := st.try("POST", "/v1/episodes", `{"namespace":`+ns+`,"episodes":[{"role":"user","content":"My sister Vera`+strconv.Itoa(i)+` lives in Graz."}]}`); code != 201 {
			t.Errorf("tenant %d add: %d %s %v", i, code, body, err)
		}
		if code, body, err := st.try("POST", "/v1/search", `{"scope":`+ns+`,"query":"Where does my sister live?"}`); code != 200 {
			t.Errorf("tenant %d search: %d %s %v", i, code, body, err)
		}
	}
	count := func() (map[string]bool, string) {
		series, body := st.scrape(t)
		names := map[string]bool{}
		for s := range series {
			if strings.HasPrefix(s, "engram_") {
				names[s] = true
			}
		}
		return names, body
	}
	count() // the scrape's own request is counted from the next one on
	work(0)
	work(1)
	one, _ := count()
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 { // four clients at once, as a server sees them
		wg.Go(func() {
			for i := range next {
				work(i)
			}
		})
	}
	for i := 2; i < 1000; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	all, body := count()
	for s := range all {
		if !one[s] {
			t.Errorf("series %s is new after a thousand tenants", s)
		}
	}
	if len(all) != len(one) {
		t.Errorf("%d engram_ series after two tenants, %d after a thousand", len(one), len(all))
	}
	for _, s := range []string{"tenant", "proj", "user9", "Vera", "Graz"} {
		if strings.Contains(body, s) {
			t.Errorf("the scrape holds %q", s)
		}
	}
}

// TestOperationTriggers: an update, a failed update and a delete through
// the API and an import are counted by operation, trigger and result.
func TestOperationTriggers(t *testing.T) {
	st := newStack(t, engine.Options{})
	code, body := st.call(t, "POST", "/v1/memories", `{"namespace":{"org":"acme","project":"demo","user":"ann"},"memories":[{"value":"Ann plays the cello."}]}`)
	var added struct{ Memories []engram.Memory }
	if code != 201 || json.Unmarshal([]byte(body), &added) != nil || len(added.Memories) != 1 {
		t.Fatalf("add: %d %s", code, body)
	}
	id := added.Memories[0].ID
	scope := "?org=acme&project=demo&user=ann"
	if code, body := st.call(t, "PATCH", "/v1/memories/"+id+scope, `{"value":"Ann plays the viola."}`); code != 200 {
		t.Fatalf("update: %d %s", code, body)
	}
	if code, _ := st.call(t, "PATCH", "/v1/memories/"+engram.NewID()+scope, `{"value":"x"}`); code != 404 {
		t.Fatalf("update of no memory: %d, want 404", code)
	}
	if code, body := st.call(t, "DELETE", "/v1/memories/"+id+scope, ""); code != 204 && code != 200 {
		t.Fatalf("delete: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", st.srv.URL+"/v1/import?org=acme&project=other&user=bo", strings.NewReader(
		`{"type":"memory","memory":{"id":"`+engram.NewID()+`","namespace":{"org":"acme","project":"other","user":"bo"},"kind":"semantic","value":"Bo sings.","status":"active","version":1,"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z","valid_from":"2026-01-01T00:00:00Z"}}`+"\n"))
	req.Header.Set("Content-Type", "application/x-ndjson")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("import: %d %s", resp.StatusCode, b)
	}
	got, _ := st.scrape(t)
	for series, want := range map[string]float64{
		`engram_memory_operations_total{former="none",op="ADD",result="ok",trigger="api"}`:        1,
		`engram_memory_operations_total{former="none",op="UPDATE",result="ok",trigger="api"}`:     1,
		`engram_memory_operations_total{former="none",op="UPDATE",result="failed",trigger="api"}`: 1,
		`engram_memory_operations_total{former="none",op="DELETE",result="ok",trigger="api"}`:     1,
		`engram_memory_operations_total{former="none",op="ADD",result="ok",trigger="import"}`:     1,
	} {
		if got[series] != want {
			t.Errorf("%s = %v, want %v", series, got[series], want)
		}
	}
}
