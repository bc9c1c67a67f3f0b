package uselite_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram/uselite"
)

var benchWords = strings.Fields(`the river town kept a small library where people met on
	quiet evenings to read letters about gardens harbours trains music weather
	markets bridges schools and the long summer festival near the old mill`)

// textsOf returns n distinct texts of exactly tokens tokens each, made of
// words that are one token each.
func textsOf(b *testing.B, m *uselite.Model, n, tokens int) []string {
	b.Helper()
	var single []string
	for _, w := range benchWords {
		if len(m.TokenizeAll(w)) == 1 {
			single = append(single, w)
		}
	}
	if len(single) < 8 {
		b.Fatalf("only %d single-token words", len(single))
	}
	out := make([]string, n)
	for i := range out {
		words := make([]string, tokens)
		for j := range words {
			words[j] = single[(i*7+j*3+j*j)%len(single)]
		}
		out[i] = strings.Join(words, " ")
		if got := len(m.TokenizeAll(out[i])); got != tokens {
			b.Fatalf("text %q has %d tokens, want %d", out[i], got, tokens)
		}
	}
	return out
}

// BenchmarkEmbed reports throughput in texts/s (wall clock) and texts/cpu-s
// for texts of 16, 64 and 128 tokens, embedded one per call (batch=1) or 32
// per call.
func BenchmarkEmbed(b *testing.B) {
	m := loadModel(b)
	for _, tokens := range []int{16, 64, 128} {
		for _, batch := range []int{1, 32} {
			b.Run(fmt.Sprintf("tokens=%d/batch=%d", tokens, batch), func(b *testing.B) {
				texts := textsOf(b, m, batch, tokens)
				ctx := context.Background()
				b.ReportAllocs()
				cpu0, cpuOK := cpuTime()
				for b.Loop() {
					if _, err := m.Embed(ctx, texts); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "texts/s")
				// The machine is shared: texts per CPU-second of this
				// process shows the cost independent of other load.
				if cpu1, ok := cpuTime(); cpuOK && ok && cpu1 > cpu0 {
					b.ReportMetric(float64(b.N*batch)/(cpu1-cpu0).Seconds(), "texts/cpu-s")
				}
			})
		}
	}
}

// BenchmarkLoad measures Load, which verifies and decodes 28 MB of weights,
// for each precision (int8 also quantizes the big matrices).
func BenchmarkLoad(b *testing.B) {
	for _, p := range []uselite.Precision{uselite.FP32, uselite.Int8} {
		b.Run(string(p), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := uselite.LoadPrecision(uselite.DefaultDir(), p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTokenize measures the tokenizer alone on a 64-token text.
func BenchmarkTokenize(b *testing.B) {
	m := loadModel(b)
	text := textsOf(b, m, 1, 64)[0]
	b.ReportAllocs()
	for b.Loop() {
		m.Tokenize(text)
	}
}
