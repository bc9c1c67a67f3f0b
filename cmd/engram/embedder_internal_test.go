package main

import (
	"context"
	"flag"
	"io"
	"testing"

	"github.com/engramhq/engram/embedbatch"
)

// fixedEmbedder embeds every text as the same vector.
type fixedEmbedder struct{}

func (fixedEmbedder) Name() string { return "fixed" }
func (fixedEmbedder) Dim() int     { return 2 }
func (fixedEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0}
	}
	return out, nil
}

// TestEmbedBatchFlag checks that the embedded model is batched by
// default and embeds on its own when --embed-batch=false or
// ENGRAM_EMBED_BATCH=false says so.
func TestEmbedBatchFlag(t *testing.T) {
	for _, tc := range []struct {
		name  string
		env   string
		args  []string
		batch bool
	}{
		{"default", "", nil, true},
		{"env off", "false", nil, false},
		{"flag off", "", []string{"--embed-batch=false"}, false},
		{"flag on over env", "false", []string{"--embed-batch=true"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var c embedFlags
			c.register(fs, func(k string) string {
				if k == "ENGRAM_EMBED_BATCH" {
					return tc.env
				}
				return ""
			})
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			_, isBatcher := c.batched(fixedEmbedder{}).(*embedbatch.Batcher)
			if c.batch != tc.batch || isBatcher != tc.batch {
				t.Errorf("batch = %v, batcher = %v; want %v", c.batch, isBatcher, tc.batch)
			}
		})
	}
}
