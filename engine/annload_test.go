package engine_test

import (
	"context"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/enginetest"
	"github.com/engramhq/engram/vector"
)

// holdWatch is an Auto index that records whether its vectors were added
// while it was held.
type holdWatch struct {
	*vector.Auto
	mu           sync.Mutex
	held         bool
	holds, loose int // Hold calls; Adds made while not held
}

func (w *holdWatch) Hold() {
	w.mu.Lock()
	w.held, w.holds = true, w.holds+1
	w.mu.Unlock()
	w.Auto.Hold()
}

func (w *holdWatch) Release() {
	w.mu.Lock()
	w.held = false
	w.mu.Unlock()
	w.Auto.Release()
}

func (w *holdWatch) Add(id string, v []float32) error {
	w.mu.Lock()
	if !w.held {
		w.loose++
	}
	w.mu.Unlock()
	return w.Auto.Add(id, v)
}

// TestLoadHoldsIndex: an index loaded from the store gets every vector
// while held, so a large one builds its graph once, from all of them,
// instead of keeping each vector past the threshold twice until the build
// catches up; it still switches to the graph.
func TestLoadHoldsIndex(t *testing.T) {
	env := newANNEnv(t)
	first, _ := env.open("")
	addANN(t, first, annAlice, annTexts...)
	first.Close()

	var mu sync.Mutex
	var made []*holdWatch
	e, err := engine.New(context.Background(), env.db, engine.Options{
		Embedder: &enginetest.BagEmbedder{},
		NewIndex: func(dim int) vector.Index {
			w := &holdWatch{Auto: vector.NewAuto(dim, vector.AutoConfig{Threshold: 8, HNSW: vector.HNSWConfig{Seed: 1, Workers: 1}})}
			mu.Lock()
			made = append(made, w)
			mu.Unlock()
			return w
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if got := denseIDs(t, e, engram.ScopeOf(annAlice), annQs...); len(got) == len(annQs) {
		t.Fatalf("the searches found nothing: %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(made) != 1 {
		t.Fatalf("%d indexes made, want alice's", len(made))
	}
	w := made[0]
	if w.holds != 1 || w.loose != 0 {
		t.Errorf("loading the index: %d holds, %d vectors added while not held; want 1 and 0", w.holds, w.loose)
	}
	if err := w.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !w.Approximate() || w.Len() != len(annTexts) {
		t.Errorf("after the load: approximate %v with %d vectors, want the graph of %d (one vector a memory)", w.Approximate(), w.Len(), len(annTexts))
	}
}
