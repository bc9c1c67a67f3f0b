package uselite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/engramhq/engram/uselite"
)

// BenchmarkEncoder runs fp32 and int8 side by side on 32 texts of 128
// tokens each (4,096 tokens a call, 16 full batches) and reports tokens per
// second (wall clock) and per CPU-second, and the achieved GFLOP per
// CPU-second: the multiply-adds of the dense layers and of attention,
// counted as two operations each.
//
//	go test -run '^$' -bench BenchmarkEncoder -benchtime 20x ./uselite/
func BenchmarkEncoder(b *testing.B) {
	models := map[uselite.Precision]*uselite.Model{uselite.FP32: loadModel(b), uselite.Int8: loadInt8(b)}
	for _, tokens := range []int{16, 128} {
		for _, p := range []uselite.Precision{uselite.FP32, uselite.Int8} {
			b.Run(fmt.Sprintf("tokens=%d/%s", tokens, p), func(b *testing.B) {
				m := models[p]
				texts := textsOf(b, m, 32, tokens)
				ctx := context.Background()
				cpu0, cpuOK := cpuTime()
				for b.Loop() {
					if _, err := m.Embed(ctx, texts); err != nil {
						b.Fatal(err)
					}
				}
				cpu1, ok := cpuTime()
				secs := b.Elapsed().Seconds()
				b.ReportMetric(float64(b.N*len(texts)*tokens)/secs, "tokens/s")
				if cpuOK && ok && cpu1 > cpu0 {
					secs = (cpu1 - cpu0).Seconds()
				}
				n := float64(b.N * len(texts))
				b.ReportMetric(n*float64(tokens)/secs, "tokens/cpu-s")
				b.ReportMetric(n*uselite.FLOPs(tokens)/secs/1e9, "GFLOP/cpu-s")
			})
		}
	}
}
