package vector

import (
	"fmt"
	"testing"
)

// TestAuto_Hold checks that a held index stays exact past its threshold,
// keeps no writes to replay, and builds its graph from every vector once
// released.
func TestAuto_Hold(t *testing.T) {
	const dim, n = 8, 200
	a := NewAuto(dim, AutoConfig{Threshold: 50, HNSW: HNSWConfig{Seed: 1}})
	a.Hold()
	for i := range n {
		v := make([]float32, dim)
		v[i%dim], v[(i/dim)%dim] = 3, 4
		v[(i/dim)%dim] /= 5
		v[i%dim] /= 5
		if i%dim == (i/dim)%dim {
			v[i%dim] = 1
		}
		if err := a.Add(fmt.Sprint(i), v); err != nil {
			t.Fatal(err)
		}
	}
	a.mu.RLock()
	building, pending := a.building, len(a.pending)
	a.mu.RUnlock()
	if building || pending != 0 || a.Approximate() {
		t.Fatalf("held index: building %v, %d pending writes, approximate %v; want none", building, pending, a.Approximate())
	}
	a.Release()
	if err := a.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !a.Approximate() || a.Len() != n {
		t.Fatalf("released index: approximate %v with %d vectors, want the graph of %d", a.Approximate(), a.Len(), n)
	}
}
