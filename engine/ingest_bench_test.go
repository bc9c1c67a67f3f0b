package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/uselite"
)

// BenchmarkIngestLoCoMo ingests the first LoCoMo conversation, one
// AddEpisodes per session, into a fresh engine with the USE-lite embedder
// behind the embedding cache, as engram serve runs it, and reports
// turns/s and CPU time per turn. "graph" keeps the entity graph as
// engram serve does; "nograph" is the same engine told to keep none
// (engine.KeepNoGraph), so the pair shows what the graph costs ingest
// with the real model. Each runs with the int8 encoder (serve's default)
// and the fp32 one. It skips without the model or the data set
// ($ENGRAM_SHARED/datasets or ../../shared/datasets).
//
//	go test -run '^$' -bench BenchmarkIngestLoCoMo -benchtime 2x ./engine/
//	go test -run '^$' -bench 'BenchmarkIngestLoCoMo/^graph$/int8' -cpuprofile /tmp/ing.prof ./engine/
func BenchmarkIngestLoCoMo(b *testing.B) {
	sessions := locomoSessions(b)
	for _, prec := range []uselite.Precision{uselite.Int8, uselite.FP32} {
		m, err := uselite.LoadPrecision(uselite.DefaultDir(), prec)
		if err != nil {
			b.Skipf("USE-lite model not installed: %v", err)
		}
		for _, mode := range []string{"nograph", "graph"} {
			b.Run(mode+"/"+string(prec), func(b *testing.B) { ingestLoCoMo(b, m, sessions, mode == "graph") })
		}
	}
}

func ingestLoCoMo(b *testing.B, m *uselite.Model, sessions [][]engram.EpisodeInput, graph bool) {
	turns := 0
	for _, s := range sessions {
		turns += len(s)
	}
	counted := &countingEmbedder{Model: m}
	ctx := context.Background()
	var cpu int64
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		dir := b.TempDir()
		db, err := sqlite.Open(ctx, filepath.Join(dir, "engram.db"))
		if err != nil {
			b.Fatal(err)
		}
		cache, err := embedcache.New(counted, embedcache.Options{})
		if err != nil {
			b.Fatal(err)
		}
		e, err := engine.New(ctx, db, engine.Options{Embedder: cache})
		if err != nil {
			b.Fatal(err)
		}
		if !graph {
			engine.KeepNoGraph(e)
		}
		ns := engram.Namespace{Org: "o", Project: "p", User: fmt.Sprintf("u%d", i)}
		b.StartTimer()
		cpu0 := cpuTime()
		for _, s := range sessions {
			if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: s}); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cpuTime() - cpu0
		checkGraphKept(b, e, ns, graph)
		b.StopTimer()
		e.Close()
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*turns)/b.Elapsed().Seconds(), "turns/s")
	b.ReportMetric(float64(cpu)/float64(b.N*turns), "cpu-ns/turn")
	b.ReportMetric(float64(counted.texts)/float64(b.N*turns), "texts/turn")
	b.ReportMetric(float64(counted.tokens)/float64(b.N*turns), "tokens/turn")
}

// locomoSessions reads the sessions of LoCoMo's first conversation as
// engram eval does (caption appended, session time plus i seconds).
func locomoSessions(b *testing.B) [][]engram.EpisodeInput {
	dir := os.Getenv("ENGRAM_SHARED")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "datasets", "locomo", "locomo10.json"))
	if err != nil {
		b.Skipf("LoCoMo data not found: %v", err)
	}
	var samples []struct {
		Conversation map[string]json.RawMessage `json:"conversation"`
	}
	if err := json.Unmarshal(raw, &samples); err != nil || len(samples) == 0 {
		b.Fatalf("parse LoCoMo: %v", err)
	}
	conv := samples[0].Conversation
	re := regexp.MustCompile(`^session_(\d+)$`)
	var nums []int
	for k := range conv {
		if m := re.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			nums = append(nums, n)
		}
	}
	sort.Ints(nums)
	var out [][]engram.EpisodeInput
	for _, n := range nums {
		var turns []struct{ Speaker, Text, Blip_caption string }
		var date string
		_ = json.Unmarshal(conv[fmt.Sprintf("session_%d", n)], &turns)
		_ = json.Unmarshal(conv[fmt.Sprintf("session_%d_date_time", n)], &date)
		at, err := time.ParseInLocation("3:04 pm on 2 January, 2006", strings.TrimSpace(date), time.UTC)
		if err != nil {
			b.Fatalf("session_%d date %q: %v", n, date, err)
		}
		var eps []engram.EpisodeInput
		for i, t := range turns {
			c := t.Text
			if t.Blip_caption != "" {
				c = strings.TrimSpace(c + " [shares a photo: " + t.Blip_caption + "]")
			}
			if strings.TrimSpace(c) == "" {
				continue
			}
			eps = append(eps, engram.EpisodeInput{Role: "user", Speaker: t.Speaker, Content: c, OccurredAt: ptr(at.Add(time.Duration(i) * time.Second))})
		}
		out = append(out, eps)
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// countingEmbedder counts the texts and tokens the model embeds (its
// tokenising, under 1% of the time, is inside the timed part).
type countingEmbedder struct {
	*uselite.Model
	mu            sync.Mutex
	texts, tokens int
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	n := 0
	for _, t := range texts {
		n += len(c.TokenizeAll(t))
	}
	c.mu.Lock()
	c.texts += len(texts)
	c.tokens += n
	c.mu.Unlock()
	return c.Model.Embed(ctx, texts)
}
