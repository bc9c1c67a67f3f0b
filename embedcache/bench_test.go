package embedcache_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
)

const (
	benchDim   = 384 // a typical small embedding model
	benchBatch = 64  // texts per Embed call
)

// computeEmbedder is the cheapest plausible inner embedder: one hash and
// benchDim pseudo-random numbers per text, no I/O and no recording.
type computeEmbedder struct{}

func (computeEmbedder) Name() string { return "compute" }
func (computeEmbedder) Dim() int     { return benchDim }
func (computeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		h := sha256.Sum256([]byte(t))
		r := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(h[:]), binary.LittleEndian.Uint64(h[8:])))
		v := make([]float32, benchDim)
		var ss float64
		for j := range v {
			x := r.NormFloat64()
			v[j] = float32(x)
			ss += x * x
		}
		inv := float32(1 / math.Sqrt(ss))
		for j := range v {
			v[j] *= inv
		}
		out[i] = v
	}
	return out, nil
}

func benchTexts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s %d: the user mentioned that their sister moved to Lisbon last spring and started a bakery", prefix, i)
	}
	return out
}

func reportTexts(b *testing.B) {
	b.ReportMetric(float64(b.N*benchBatch)/b.Elapsed().Seconds(), "texts/s")
}

func runEmbed(b *testing.B, e engram.Embedder, texts []string) {
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	reportTexts(b)
}

// BenchmarkEmbed compares one call of 64 texts of 384 dimensions served by
// the inner embedders alone with the same call served by the cache's tiers.
func BenchmarkEmbed(b *testing.B) {
	texts := benchTexts("t", benchBatch)
	ctx := context.Background()

	b.Run("inner=compute", func(b *testing.B) {
		runEmbed(b, computeEmbedder{}, texts)
	})
	b.Run("inner=http-loopback", func(b *testing.B) {
		srv := openaitest.NewServer(b, openaitest.Options{Dim: benchDim})
		e, err := openai.NewEmbedder(openai.Config{BaseURL: srv.URL(), Model: "m", Logger: quiet()})
		if err != nil {
			b.Fatal(err)
		}
		runEmbed(b, e, texts)
	})
	b.Run("cache=memory-hit", func(b *testing.B) {
		c := newCache(b, computeEmbedder{}, embedcache.Options{})
		if _, err := c.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
		runEmbed(b, c, texts)
		if s := c.Stats(); s.Misses != benchBatch {
			b.Fatalf("stats %+v: not all hits", s)
		}
	})
	b.Run("cache=memory-hit-partitioned", func(b *testing.B) {
		// As a tenant's user asks: the key names the partition too.
		c := newCache(b, computeEmbedder{}, embedcache.Options{})
		pctx := engram.WithEmbedPartition(ctx, engram.Namespace{Org: "acme", Project: "app", User: "alice"})
		if _, err := c.Embed(pctx, texts); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := c.Embed(pctx, texts); err != nil {
				b.Fatal(err)
			}
		}
		reportTexts(b)
		if s := c.Stats(); s.Misses != benchBatch {
			b.Fatalf("stats %+v: not all hits", s)
		}
	})
	b.Run("cache=disk-hit", func(b *testing.B) {
		// The memory tier is off, so every call reads SQLite.
		c := newCache(b, computeEmbedder{}, embedcache.Options{Path: filepath.Join(b.TempDir(), "c.db"), MaxEntries: -1})
		if _, err := c.Embed(ctx, texts); err != nil {
			b.Fatal(err)
		}
		runEmbed(b, c, texts)
		if s := c.Stats(); s.Misses != benchBatch || s.DiskErrors != 0 {
			b.Fatalf("stats %+v: not all disk hits", s)
		}
	})
	b.Run("cache=miss-with-disk", func(b *testing.B) {
		// Every call brings new texts: the inner call plus a disk write.
		c := newCache(b, computeEmbedder{}, embedcache.Options{Path: filepath.Join(b.TempDir(), "c.db")})
		n := 0
		for b.Loop() {
			n++
			if _, err := c.Embed(ctx, benchTexts(fmt.Sprint(n), benchBatch)); err != nil {
				b.Fatal(err)
			}
		}
		reportTexts(b)
	})
}

// BenchmarkEmbedParallel measures memory hits from all cores at once, where
// the LRU's mutex is shared.
func BenchmarkEmbedParallel(b *testing.B) {
	texts := benchTexts("t", benchBatch)
	c := newCache(b, computeEmbedder{}, embedcache.Options{})
	if _, err := c.Embed(context.Background(), texts); err != nil {
		b.Fatal(err)
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Embed(context.Background(), texts); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportTexts(b)
}
