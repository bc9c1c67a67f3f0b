package index

import (
	"errors"
	"math"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vector"
)

// TestANNFile_HeaderChecked: a file is read only by the store, embedder,
// dimension and partition it was written for.
func TestANNFile_HeaderChecked(t *testing.T) {
	dir := t.TempDir()
	const dim = 8
	g := vector.NewHNSW(dim, vector.HNSWConfig{Seed: 1})
	for i := range 20 {
		v := make([]float32, dim)
		v[i%dim], v[(i+1)%dim] = float32(math.Sqrt(0.5)), float32(math.Sqrt(0.5))
		if i >= dim {
			v[(i+1)%dim] = -v[(i+1)%dim]
		}
		if err := g.Add(itemID(string(rune('a'+i)), engram.FieldValue), v); err != nil {
			t.Fatal(err)
		}
	}
	k := partKey{"acme", "app", "alice"}
	ns := map[string]engram.Namespace{"a": {Org: "acme", Project: "app", User: "alice", Agent: "bot", Session: "s1"}}
	w := &annFiles{dir: dir, store: "s1", emb: "bag", dim: dim}
	if err := w.write(k, 42, g, ns); err != nil {
		t.Fatal(err)
	}
	f, err := w.read(k, 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.seq != 42 || f.graph.Len() != g.Len() || f.ns["a"] != ns["a"] {
		t.Fatalf("read seq %d, %d vectors, namespace %+v", f.seq, f.graph.Len(), f.ns["a"])
	}
	for name, r := range map[string]*annFiles{
		"store":     {dir: dir, store: "s2", emb: "bag", dim: dim},
		"embedder":  {dir: dir, store: "s1", emb: "other", dim: dim},
		"dimension": {dir: dir, store: "s1", emb: "bag", dim: dim * 2},
	} {
		if _, err := r.read(k, 1); !errors.Is(err, errANNMismatch) {
			t.Errorf("another %s: read = %v, want errANNMismatch", name, err)
		}
	}
}
