package retrieval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/engramhq/engram/internal/shareddata"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/metrics"
	"github.com/engramhq/engram/retrieval"
	"github.com/engramhq/engram/storeopen"
	"github.com/engramhq/engram/uselite"
	"github.com/engramhq/engram/wordnet"
)

// locomoConversation reads the first LoCoMo conversation: its turns as
// episodes and its questions.
func locomoConversation(tb testing.TB) ([]engram.EpisodeInput, []string) {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join(shareddata.Dir(), "locomo", "locomo10.json"))
	if err != nil {
		tb.Skipf("LoCoMo data not found (set ENGRAM_SHARED): %v", err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string `json:"question"`
		} `json:"qa"`
	}
	if err := json.Unmarshal(raw, &samples); err != nil {
		tb.Fatal(err)
	}
	s := samples[0]
	var nums []int
	for k := range s.Conversation {
		if m := regexp.MustCompile(`^session_(\d+)$`).FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	var eps []engram.EpisodeInput
	for _, n := range nums {
		var date string
		_ = json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d_date_time", n)], &date)
		at, err := time.Parse("3:04 pm on 2 January, 2006", strings.TrimSpace(date))
		if err != nil {
			tb.Fatal(err)
		}
		var turns []struct{ Speaker, Text string }
		_ = json.Unmarshal(s.Conversation[fmt.Sprintf("session_%d", n)], &turns)
		for i, t := range turns {
			if t.Text == "" {
				continue
			}
			ts := at.Add(time.Duration(i) * time.Second)
			eps = append(eps, engram.EpisodeInput{Role: "user", Speaker: t.Speaker, Content: t.Text, OccurredAt: &ts})
		}
	}
	var qs []string
	for _, q := range s.QA {
		qs = append(qs, q.Question)
	}
	return eps, qs
}

// queryModel embeds through a cache until live is set, so setup (ingest)
// is quick, and with the model itself after, so every timed search pays
// for embedding its query: all its phrasings and parts.
type queryModel struct {
	model engram.Embedder
	cache engram.Embedder
	live  *atomic.Bool
}

func (q queryModel) Name() string { return q.model.Name() }
func (q queryModel) Dim() int     { return q.model.Dim() }
func (q queryModel) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if q.live.Load() {
		return q.model.Embed(ctx, texts)
	}
	return q.cache.Embed(ctx, texts)
}

// BenchmarkSearchLoCoMo measures the full search (query analysis and
// embedding, BM25, dense, fusion, rerank) over one LoCoMo conversation
// (about 420 memories with their embeddings), asking its questions in
// turn. It reports the 50th, 95th and 99th percentile of one search.
func BenchmarkSearchLoCoMo(b *testing.B) { benchSearchLoCoMo(b, "", nil, nil) }

// BenchmarkSearchLoCoMoAgentic is BenchmarkSearchLoCoMo in agentic mode
// without a chat model, with the anchors' refinement on (a second search
// of the pipeline; the defaults run none), for its latency against the
// one-shot search's.
func BenchmarkSearchLoCoMoAgentic(b *testing.B) { benchSearchLoCoMo(b, engram.ModeAgentic, nil, nil) }

// BenchmarkSearchLoCoMoAgenticGraph is BenchmarkSearchLoCoMo in agentic
// mode expanding through the entity graph (docs/retrieval-tuning.md,
// round 9: shares 0.9, 5 memories from each of the first 5 hits, two
// expansions).
func BenchmarkSearchLoCoMoAgenticGraph(b *testing.B) {
	agent := engine.DefaultAgentConfig()
	agent.EntityShare, agent.RelationShare, agent.EntityLimit, agent.ExpandFrom, agent.ExpandSteps, agent.MinGain = 0.9, 0.9, 5, 5, 2, 0
	benchSearchLoCoMo(b, engram.ModeAgentic, nil, &agent)
}

// BenchmarkSearchLoCoMoGraph is BenchmarkSearchLoCoMo with the entity-graph
// channel added.
func BenchmarkSearchLoCoMoGraph(b *testing.B) {
	benchSearchLoCoMo(b, "", []retrieval.Channel{retrieval.Graph{}}, nil)
}

// BenchmarkSearchLoCoMoWordNet is BenchmarkSearchLoCoMo with the WordNet
// query-expansion channel added (the database read before the timing).
func BenchmarkSearchLoCoMoWordNet(b *testing.B) {
	db := wordnet.Open(wordnet.DefaultDir())
	if err := db.Load(); err != nil {
		b.Skipf("wordnet database not installed: %v", err)
	}
	th := &wordnet.Thesaurus{DB: db, Limits: wordnet.DefaultLimits}
	benchSearchLoCoMo(b, "", []retrieval.Channel{retrieval.Expansion{Thesaurus: th}}, nil)
}

// benchSearchLoCoMo measures search latency on one LoCoMo conversation
// in mode with the default channels and extra, an agentic search weighed
// by agent (nil: the defaults with the anchors' refinement on).
func benchSearchLoCoMo(b *testing.B, mode string, extra []retrieval.Channel, agent *engine.AgentConfig) {
	ctx := context.Background()
	eps, qs := locomoConversation(b)
	model, err := uselite.Load(uselite.DefaultDir())
	if err != nil {
		b.Skipf("use-lite model not installed: %v", err)
	}
	cache, err := embedcache.New(model, embedcache.Options{Path: filepath.Join(b.TempDir(), "cache.db"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	live := new(atomic.Bool)
	if agent == nil {
		c := engine.DefaultAgentConfig()
		c.AnchorWeight = 0.8
		agent = &c
	}
	opts := engine.Options{Embedder: queryModel{model, cache, live}, Logger: slog.New(slog.DiscardHandler), AccessFlush: time.Hour, Agent: agent, Channels: extra}
	if os.Getenv("ENGRAM_BENCH_OBSERVE") == "1" {
		// Report to the metrics engram serve keeps, to measure their cost.
		opts.Observer = metrics.New(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}
	e, err := storeopen.Engine(ctx, b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ns := engram.Namespace{Org: "bench", Project: "locomo", User: "conv"}
	if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: eps}); err != nil {
		b.Fatal(err)
	}
	search := func(q string) time.Duration {
		start := time.Now()
		if _, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: q, K: 20, Mode: mode}); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	live.Store(true)
	search(qs[0]) // loads the vector index
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lat = append(lat, search(qs[i%len(qs)]))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.95), "p95-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
