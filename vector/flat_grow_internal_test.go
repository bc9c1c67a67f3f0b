package vector

import (
	"fmt"
	"testing"
)

// TestFlat_SmallIndexStaysSmall checks that an index of a few vectors
// holds room for about as many, not for a thousand: an engine keeps one per
// tenant and user. It also checks that growing keeps every vector.
func TestFlat_SmallIndexStaysSmall(t *testing.T) {
	const dim = 512
	f := NewFlat(dim)
	for i := range 10 {
		v := make([]float32, dim)
		v[i] = 1
		if err := f.Add(fmt.Sprint(i), v); err != nil {
			t.Fatal(err)
		}
	}
	if got, most := cap(f.data), 64*dim; got > most {
		t.Errorf("10 vectors hold room for %d floats, want at most %d", got, most)
	}
	for i := 10; i < 300; i++ {
		v := make([]float32, dim)
		v[i] = 1
		if err := f.Add(fmt.Sprint(i), v); err != nil {
			t.Fatal(err)
		}
	}
	for _, i := range []int{0, 9, 31, 32, 150, 299} {
		q := make([]float32, dim)
		q[i] = 1
		hits := f.Search(q, 1, nil)
		if len(hits) != 1 || hits[0].ID != fmt.Sprint(i) {
			t.Errorf("search for vector %d found %v", i, hits)
		}
	}
}
