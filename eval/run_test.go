package eval_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/eval"
)

var update = flag.Bool("update", false, "rewrite golden files")

// shared holds the fixture runs several tests read, made once: every run
// costs seconds under the race detector.
var shared struct {
	sync.Mutex
	dir  string
	runs map[string]*baseRun
}

type baseRun struct {
	rep *eval.Report
	out string
	rec *recorder
}

func TestMain(m *testing.M) {
	// The store logs its migrations to the default logger.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	dir, err := os.MkdirTemp("", "eval-test-*")
	if err != nil {
		panic(err)
	}
	shared.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// base returns the run of every system on a fixture with its files
// written, recording what the engine was sent.
func base(t *testing.T, bench string) *baseRun {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if b := shared.runs[bench]; b != nil {
		return b
	}
	data := map[string]string{eval.BenchLoCoMo: locomoMini, eval.BenchLongMemEval: lmeMini}[bench]
	out, err := os.MkdirTemp(shared.dir, bench+"-out-*")
	if err != nil {
		t.Fatal(err)
	}
	dataDir, err := os.MkdirTemp(shared.dir, bench+"-data-*")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	rep := run(t, eval.Config{Bench: bench, Data: data, Out: out, DataDir: dataDir, NewEngine: recordingEngine(rec)})
	if shared.runs == nil {
		shared.runs = map[string]*baseRun{}
	}
	b := &baseRun{rep: rep, out: out, rec: rec}
	shared.runs[bench] = b
	return b
}

const (
	locomoMini = "testdata/locomo_mini.json"
	lmeMini    = "testdata/longmemeval_mini.json"
)

// recorder wraps the real engine to record what the harness sends it and,
// optionally, to fail searches on chosen channels.
type recorder struct {
	engram.Service
	mu       sync.Mutex
	adds     []engram.AddEpisodesRequest
	searches []engram.SearchRequest
	failOn   map[string]error // channel -> error
}

func (r *recorder) AddEpisodes(ctx context.Context, req engram.AddEpisodesRequest) (*engram.AddEpisodesResult, error) {
	r.mu.Lock()
	r.adds = append(r.adds, req)
	r.mu.Unlock()
	return r.Service.AddEpisodes(ctx, req)
}

func (r *recorder) Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error) {
	r.mu.Lock()
	r.searches = append(r.searches, req)
	r.mu.Unlock()
	key := strings.Join(req.Channels, ",")
	if err, ok := r.failOn[key]; ok {
		return nil, err
	}
	return r.Service.Search(ctx, req)
}

func recordingEngine(rec *recorder) eval.EngineFactory {
	return func(ctx context.Context, dir string) (engram.Service, func() error, error) {
		svc, closeFn, err := eval.DefaultEngine(ctx, dir)
		if err != nil {
			return nil, nil, err
		}
		rec.Service = svc
		return rec, closeFn, nil
	}
}

func run(t *testing.T, cfg eval.Config) *eval.Report {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	rep, err := eval.Run(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Run(%s, %s): %v", cfg.Bench, cfg.Data, err)
	}
	return rep
}

func overall(t *testing.T, rep *eval.Report, system, level string) map[string]float64 {
	t.Helper()
	sr := rep.Systems[system]
	if sr == nil {
		t.Fatalf("no system %s", system)
	}
	lr := sr.Level(level)
	if lr == nil {
		t.Fatalf("system %s has no %s level", system, level)
	}
	return lr.Overall
}

// keyPaths lists every object key path of a JSON value, with map keys of
// "systems" kept and array contents not descended into.
func keyPaths(prefix string, v any, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, c := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		*out = append(*out, p)
		keyPaths(p, c, out)
	}
}

func TestReportShape(t *testing.T) {
	for _, tt := range []struct{ bench string }{{eval.BenchLoCoMo}, {eval.BenchLongMemEval}} {
		t.Run(tt.bench, func(t *testing.T) {
			out := base(t, tt.bench).out
			for _, f := range []string{"report.json", "report.md", "questions.jsonl"} {
				if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
					t.Errorf("%s missing or empty: %v", f, err)
				}
			}
			levels := []string{"turn"}
			if tt.bench == eval.BenchLongMemEval {
				levels = []string{"session", "turn"}
			}
			for _, l := range levels {
				for _, f := range []string{"recall_at_k_" + l + ".svg", "recall_vs_tokens_" + l + ".svg"} {
					b, err := os.ReadFile(filepath.Join(out, f))
					if err != nil || !strings.HasPrefix(string(b), "<svg") || !strings.Contains(string(b), "<polyline") {
						t.Errorf("%s is not an SVG line plot (err %v)", f, err)
					}
				}
			}

			raw, err := os.ReadFile(filepath.Join(out, "report.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			systems := doc["systems"].(map[string]any)
			// The dense channel does not exist yet in every engine: it is
			// either unavailable with a reason or reported like bm25.
			dense, ok := systems["dense"].(map[string]any)
			if !ok {
				t.Fatalf("systems.dense missing")
			}
			if msg, _ := dense["unavailable"].(string); msg != "" {
				delete(systems, "dense")
			} else {
				systems["dense"] = systems["bm25"]
			}
			var paths []string
			keyPaths("", doc, &paths)
			sort.Strings(paths)
			got := strings.Join(paths, "\n") + "\n"
			golden := filepath.Join("testdata", tt.bench+"_report_keys.golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("report.json keys differ from %s (run with -update after an intended change):\n%s", golden, diffLines(string(want), got))
			}
		})
	}
}

func diffLines(want, got string) string {
	w := map[string]bool{}
	for _, l := range strings.Split(want, "\n") {
		w[l] = true
	}
	g := map[string]bool{}
	for _, l := range strings.Split(got, "\n") {
		g[l] = true
	}
	var b strings.Builder
	for l := range w {
		if !g[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for l := range g {
		if !w[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}

// Floors measured on the fixtures with the BM25-only engine; a retrieval
// change that loses evidence on these easy questions fails here.
func TestFixtureFloors(t *testing.T) {
	rep := base(t, eval.BenchLoCoMo).rep
	if got, want := rep.Run.Scored["turn"], 13; got != want {
		t.Errorf("LoCoMo fixture: %d questions scored, want %d", got, want)
	}
	if got, want := rep.Run.Skipped["turn"], map[string]int{"adversarial": 1, "no_evidence": 2}; !reflect.DeepEqual(got, want) {
		t.Errorf("LoCoMo fixture: skipped %v, want %v", got, want)
	}
	for _, sys := range []string{eval.SystemEngram, eval.SystemBM25} {
		m := overall(t, rep, sys, "turn")
		for metric, floor := range map[string]float64{"recall@1": 0.6, "recall@5": 0.9, "recall@10": 0.9, "mrr": 0.8, "recall_tokens@500": 0.9} {
			if m[metric] < floor {
				t.Errorf("LoCoMo fixture %s %s = %.3f, below the floor %.2f", sys, metric, m[metric], floor)
			}
		}
	}
	full := overall(t, rep, eval.SystemFull, "turn")
	if _, ok := full["recall@10"]; ok {
		t.Errorf("full history reports recall@10; it has no ranking")
	}
	eng := overall(t, rep, eval.SystemEngram, "turn")
	if !(full["context_tokens_mean"] > eng["context_tokens_mean"]) {
		t.Errorf("full history (%v tokens) is not longer than engram's top 10 (%v)", full["context_tokens_mean"], eng["context_tokens_mean"])
	}
	for _, b := range []string{"500", "1000", "2000", "4000"} {
		if v := eng["context_tokens_mean@"+b]; v <= 0 || v > mustFloat(b) {
			t.Errorf("context_tokens_mean@%s = %v, outside (0, %s]", b, v, b)
		}
	}

	rep = base(t, eval.BenchLongMemEval).rep
	if got, want := rep.Run.Skipped["session"]["abstention"], 1; got != want {
		t.Errorf("LongMemEval fixture: %d abstention questions skipped, want %d", got, want)
	}
	if _, ok := rep.Systems[eval.SystemEngram].Session.ByCategory["temporal-reasoning"]; ok {
		t.Errorf("the abstention question's type appears in by_category")
	}
	for _, sys := range []string{eval.SystemEngram, eval.SystemBM25} {
		if got := overall(t, rep, sys, "session")["recall@5"]; got < 0.99 {
			t.Errorf("LongMemEval fixture %s session recall@5 = %.3f, below the floor 0.99", sys, got)
		}
		// q4's piano-and-guitar turn shares no word with its question.
		if got := overall(t, rep, sys, "turn")["recall@5"]; got < 0.8 {
			t.Errorf("LongMemEval fixture %s turn recall@5 = %.3f, below the floor 0.80", sys, got)
		}
	}
}

func mustFloat(s string) float64 {
	var f float64
	fmt.Sscan(s, &f)
	return f
}

// mutateLabels rewrites every label of a benchmark file (evidence,
// has_answer, answer sessions, answers, categories and types) and, with
// strip, removes them; everything a user would have stays as it was.
func mutateLabels(t *testing.T, bench, in string, strip bool) string {
	t.Helper()
	recs := readRecords(t, in)
	for _, r := range recs {
		switch bench {
		case eval.BenchLoCoMo:
			for i, q := range r["qa"].([]any) {
				qa := q.(map[string]any)
				if strip {
					qa["evidence"] = []any{}
					delete(qa, "answer")
					delete(qa, "adversarial_answer")
					qa["category"] = 4
					continue
				}
				qa["evidence"] = []any{fmt.Sprintf("D1:%d", i%3+1)}
				qa["answer"] = "changed"
				qa["category"] = 5 - int(qa["category"].(float64))%5
			}
		case eval.BenchLongMemEval:
			if strip {
				r["answer_session_ids"] = []any{}
				delete(r, "answer")
				r["question_type"] = "unknown"
			} else {
				r["answer_session_ids"] = []any{r["haystack_session_ids"].([]any)[0]}
				r["answer"] = 42
				r["question_type"] = "changed-type"
			}
			for _, s := range r["haystack_sessions"].([]any) {
				for i, tr := range s.([]any) {
					turn := tr.(map[string]any)
					if strip {
						delete(turn, "has_answer")
					} else {
						turn["has_answer"] = i%2 == 1
					}
				}
			}
		}
	}
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(in))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// renameIDs rewrites a benchmark file's session and haystack ids (and the
// evidence lists naming them) to unrelated names and returns the new file
// with a function mapping a renamed id, or "<id>#<rest>", back.
func renameIDs(t *testing.T, bench, in string) (string, func(string) string) {
	t.Helper()
	recs := readRecords(t, in)
	old := map[string]string{}
	fresh := map[string]string{}
	rename := func(id, prefix string) string {
		if n, ok := fresh[id]; ok {
			return n
		}
		n := fmt.Sprintf("%s%02d", prefix, len(fresh))
		if strings.HasSuffix(id, "_abs") {
			n += "_abs" // the suffix is the benchmark's abstention marker
		}
		fresh[id], old[n] = n, id
		return n
	}
	for _, r := range recs {
		switch bench {
		case eval.BenchLoCoMo:
			r["sample_id"] = rename(r["sample_id"].(string), "sample-")
		case eval.BenchLongMemEval:
			r["question_id"] = rename(r["question_id"].(string), "hay-")
			for _, key := range []string{"haystack_session_ids", "answer_session_ids"} {
				for i, id := range r[key].([]any) {
					r[key].([]any)[i] = rename(id.(string), "chat-")
				}
			}
		}
	}
	b, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "renamed-"+filepath.Base(in))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, func(s string) string {
		id, rest, found := strings.Cut(s, "#")
		if o, ok := old[id]; ok {
			id = o
		}
		if found {
			return id + "#" + rest
		}
		return id
	}
}

func rankings(rep *eval.Report, systems []string) map[string]map[string][][]string {
	out := map[string]map[string][][]string{}
	for _, q := range rep.Questions {
		m := map[string][][]string{}
		for _, sys := range systems {
			if qs := q.Systems[sys]; qs != nil {
				m[sys] = qs.Ranked
			}
		}
		out[q.ID] = m
	}
	return out
}

// Labels are for scoring only: changing or removing them must not change a
// single ranking, and must not reach the engine.
func TestLabelsDoNotChangeRankings(t *testing.T) {
	for _, tt := range []struct {
		bench, data string
		metaKeys    []string
	}{
		{eval.BenchLoCoMo, locomoMini, []string{"dia_id", "session"}},
		{eval.BenchLongMemEval, lmeMini, []string{"session_id", "turn"}},
	} {
		t.Run(tt.bench, func(t *testing.T) {
			systems := []string{eval.SystemEngram, eval.SystemBM25, eval.SystemFull}
			b := base(t, tt.bench)
			rec, base := b.rec, b.rep
			want := rankings(base, systems)
			if len(want) == 0 {
				t.Fatal("no questions")
			}
			nonEmpty := 0
			for _, m := range want {
				if len(m[eval.SystemEngram]) > 0 {
					nonEmpty++
				}
			}
			if nonEmpty == 0 {
				t.Fatal("every ranking is empty; the comparison would prove nothing")
			}

			// Nothing but the turn's own identifiers goes into metadata,
			// and queries are the questions' text.
			for _, add := range rec.adds {
				for _, e := range add.Episodes {
					var keys []string
					for k := range e.Metadata {
						keys = append(keys, k)
					}
					sort.Strings(keys)
					if !reflect.DeepEqual(keys, tt.metaKeys) {
						t.Fatalf("episode metadata keys %v, want %v", keys, tt.metaKeys)
					}
				}
			}
			for _, s := range rec.searches {
				if s.Explain && len(s.Channels) == 0 {
					t.Errorf("a measured search asked for Explain")
				}
			}

			// Benchmark ids reach the engine only hashed: no session,
			// user or metadata string is one the file holds.
			raw, err := os.ReadFile(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			for _, add := range rec.adds {
				ns := add.Namespace
				leaked := []string{ns.User, ns.Session}
				for _, e := range add.Episodes {
					for _, v := range e.Metadata {
						if s, ok := v.(string); ok {
							leaked = append(leaked, s)
						}
					}
				}
				for _, s := range leaked {
					if strings.Contains(s, "answer_") || strings.Contains(string(raw), `"`+s+`"`) {
						t.Fatalf("the engine received the benchmark's own id %q", s)
					}
				}
			}

			// Renaming sessions and haystacks changes no ranking and no score.
			renamed, back := renameIDs(t, tt.bench, tt.data)
			other := run(t, eval.Config{Bench: tt.bench, Data: renamed, Systems: systems})
			got := map[string]map[string][][]string{}
			for id, m := range rankings(other, systems) {
				for sys, ranked := range m {
					for _, units := range ranked {
						for i, u := range units {
							units[i] = back(u)
						}
					}
					m[sys] = ranked
				}
				got[back(id)] = m
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("rankings changed when only session and haystack names changed")
			}
			for _, sys := range systems {
				for _, level := range []string{"session", "turn"} {
					a, b := other.Systems[sys].Level(level), base.Systems[sys].Level(level)
					if (a == nil) != (b == nil) || a != nil && !reflect.DeepEqual(a.Overall, b.Overall) {
						t.Errorf("%s %s scores changed when only names changed", sys, level)
					}
				}
			}

			for _, strip := range []bool{false, true} {
				mutated := mutateLabels(t, tt.bench, tt.data, strip)
				other := run(t, eval.Config{Bench: tt.bench, Data: mutated, Systems: systems})
				if got := rankings(other, systems); !reflect.DeepEqual(got, want) {
					t.Errorf("strip=%v: rankings changed when only labels changed", strip)
				}
				// The mutation must have reached the scorer, or this test
				// would pass without testing anything.
				if reflect.DeepEqual(other.Run.Scored, base.Run.Scored) && reflect.DeepEqual(overall(t, other, eval.SystemEngram, "turn"), overall(t, base, eval.SystemEngram, "turn")) {
					t.Errorf("strip=%v: scores did not change; labels were not mutated", strip)
				}
			}
		})
	}
}

// Every search is asked at the question's time: LongMemEval's
// question_date, or for LoCoMo, which has none, the latest turn.
func TestSearchNow(t *testing.T) {
	raw, err := os.ReadFile(lmeMini)
	if err != nil {
		t.Fatal(err)
	}
	var lme []struct {
		Question     string
		QuestionDate string `json:"question_date"`
	}
	if err := json.Unmarshal(raw, &lme); err != nil {
		t.Fatal(err)
	}
	want := map[string]time.Time{}
	for _, r := range lme {
		at, err := time.Parse("2006/01/02 (Mon) 15:04", r.QuestionDate)
		if err != nil {
			t.Fatal(err)
		}
		want[r.Question] = at
	}
	// The mini LoCoMo file's conversations end with session 3 (conv-a,
	// 7 turns) and session 2 (conv-b, 5 turns), a second per turn.
	raw, err = os.ReadFile(locomoMini)
	if err != nil {
		t.Fatal(err)
	}
	var locomo []struct {
		Conversation map[string]json.RawMessage
		QA           []struct{ Question string }
	}
	if err := json.Unmarshal(raw, &locomo); err != nil {
		t.Fatal(err)
	}
	for _, c := range locomo {
		var last time.Time
		for k, v := range c.Conversation {
			var turns []json.RawMessage
			if !strings.HasPrefix(k, "session_") || strings.HasSuffix(k, "_date_time") || json.Unmarshal(v, &turns) != nil {
				continue
			}
			var date string
			json.Unmarshal(c.Conversation[k+"_date_time"], &date)
			at, err := time.Parse("3:04 pm on 2 January, 2006", date)
			if err != nil {
				t.Fatal(err)
			}
			if at = at.Add(time.Duration(len(turns)-1) * time.Second); at.After(last) {
				last = at
			}
		}
		for _, q := range c.QA {
			want[q.Question] = last
		}
	}

	for _, tt := range []struct{ bench, now string }{
		{eval.BenchLongMemEval, "question date"},
		{eval.BenchLoCoMo, "latest turn of the haystack: the benchmark gives no question date"},
	} {
		t.Run(tt.bench, func(t *testing.T) {
			b := base(t, tt.bench)
			if got := b.rep.Run.Now; got != tt.now {
				t.Errorf("run.now = %q, want %q", got, tt.now)
			}
			if len(b.rec.searches) == 0 {
				t.Fatal("no searches recorded")
			}
			for _, s := range b.rec.searches {
				w, ok := want[s.Query]
				if !ok {
					t.Fatalf("search for %q, which is no question of the file", s.Query)
				}
				if s.Now == nil || !s.Now.Equal(w) {
					t.Fatalf("search for %q (channels %v) passed now %v, want %v", s.Query, s.Channels, s.Now, w)
				}
			}
		})
	}
}

// Only keeps the haystacks at the given indexes of the file.
func TestRunOnly(t *testing.T) {
	rep := run(t, eval.Config{Bench: eval.BenchLongMemEval, Data: lmeMini, Only: []int{3, 1, 3}, Systems: []string{eval.SystemBM25}})
	var got []string
	for _, q := range rep.Questions {
		got = append(got, q.Haystack)
	}
	if want := []string{"q2", "q4"}; !reflect.DeepEqual(got, want) {
		t.Errorf("haystacks = %v, want %v", got, want)
	}
	if got, want := rep.Run.Only, []int{1, 3}; !reflect.DeepEqual(got, want) {
		t.Errorf("run.only = %v, want %v", got, want)
	}
	for _, cfg := range []eval.Config{
		{Bench: eval.BenchLongMemEval, Data: lmeMini, Only: []int{4}},
		{Bench: eval.BenchLongMemEval, Data: lmeMini, Only: []int{-1}},
		{Bench: eval.BenchLongMemEval, Data: lmeMini, Only: []int{1}, Limit: 2},
	} {
		cfg.DataDir = t.TempDir()
		if _, err := eval.Run(context.Background(), cfg); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("only %v limit %d: err = %v, want EINVALID", cfg.Only, cfg.Limit, err)
		}
	}
}

func TestChannelUnavailable(t *testing.T) {
	rec := &recorder{failOn: map[string]error{"dense": engram.Errorf(engram.EUNAVAILABLE, "dense channel: no embedder configured")}}
	rep := run(t, eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, Limit: 1, NewEngine: recordingEngine(rec)})
	if got, want := rep.Systems[eval.SystemDense].Unavailable, "dense channel: no embedder configured"; got != want {
		t.Errorf("dense unavailable = %q, want %q", got, want)
	}
	if rep.Systems[eval.SystemDense].Turn != nil {
		t.Errorf("an unavailable system has metrics")
	}
	if rep.Systems[eval.SystemBM25].Turn == nil {
		t.Errorf("bm25 has no metrics")
	}
	if !strings.Contains(rep.Summary(), "dense unavailable: dense channel: no embedder configured") {
		t.Errorf("summary does not say why dense is missing:\n%s", rep.Summary())
	}

	// A failing engram search fails the run.
	rec = &recorder{failOn: map[string]error{"": engram.Errorf(engram.EUNAVAILABLE, "store down")}}
	_, err := eval.Run(context.Background(), eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, Limit: 1, DataDir: t.TempDir(),
		Systems: []string{eval.SystemEngram}, NewEngine: recordingEngine(rec)})
	if err == nil || !strings.Contains(err.Error(), "store down") {
		t.Errorf("Run with a failing engram search: err = %v", err)
	}
}

func TestRunConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  eval.Config
	}{
		{"no bench", eval.Config{Data: locomoMini}},
		{"bad bench", eval.Config{Bench: "mmlu", Data: locomoMini}},
		{"no data", eval.Config{Bench: eval.BenchLoCoMo}},
		{"k too small", eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, K: 10}},
		{"pool below k", eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, K: 30, PoolK: 25}},
		{"unknown system", eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, Systems: []string{"bm42"}}},
		{"negative limit", eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, Limit: -1}},
		{"wrong format", eval.Config{Bench: eval.BenchLongMemEval, Data: locomoMini}},
		{"llm without model", eval.Config{Bench: eval.BenchLoCoMo, Data: locomoMini, LLM: &eval.LLMConfig{URL: "http://127.0.0.1:1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.DataDir = t.TempDir()
			_, err := eval.Run(context.Background(), tt.cfg)
			if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
				t.Errorf("err = %v, want code %s", err, want)
			}
		})
	}
}

// Run leaves nothing behind in DataDir.
func TestRunCleansDataDir(t *testing.T) {
	dir := t.TempDir()
	run(t, eval.Config{Bench: eval.BenchLongMemEval, Data: lmeMini, DataDir: dir, Limit: 1})
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 0 {
		t.Errorf("data dir holds %d entries after the run", len(ents))
	}
}

// --turn-at-a-time adds every turn in a call of its own and scores the
// same questions. (That such turns are formed as a batch would form them
// is the engine's TurnAtATime test; these fixtures are too small to show
// it in recall.)
func TestTurnAtATime(t *testing.T) {
	for _, bench := range []string{eval.BenchLoCoMo, eval.BenchLongMemEval} {
		t.Run(bench, func(t *testing.T) {
			data := map[string]string{eval.BenchLoCoMo: locomoMini, eval.BenchLongMemEval: lmeMini}[bench]
			rec := &recorder{}
			got := run(t, eval.Config{Bench: bench, Data: data, Systems: []string{eval.SystemEngram}, TurnAtATime: true, NewEngine: recordingEngine(rec)})
			if len(rec.adds) == 0 {
				t.Fatal("nothing added")
			}
			turns := 0
			for _, add := range rec.adds {
				if len(add.Episodes) != 1 {
					t.Fatalf("a call added %d turns", len(add.Episodes))
				}
				turns++
			}
			if want := base(t, bench).rep.Run.Episodes; turns != want {
				t.Errorf("%d turns added, want %d", turns, want)
			}
			if g, w := len(got.Questions), len(base(t, bench).rep.Questions); g != w {
				t.Errorf("%d questions scored, want %d", g, w)
			}
		})
	}
}

// readRecords reads a benchmark file as its list of JSON records.
func readRecords(t *testing.T, in string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(raw, &recs); err != nil {
		t.Fatal(err)
	}
	return recs
}
