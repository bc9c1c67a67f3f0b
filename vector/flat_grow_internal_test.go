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

// TestFlat_SnapshotSharesUntilWrite checks that a snapshot shares the
// vectors (no copy) and still reads what they were when taken after every
// kind of write: a delete that moves the last vector, an update in place,
// a delete of the last vector followed by an add into its place, and adds
// past the end.
func TestFlat_SnapshotSharesUntilWrite(t *testing.T) {
	const dim = 8
	unit := func(i int) []float32 {
		v := make([]float32, dim)
		v[i%dim] = 1
		return v
	}
	for _, c := range []struct {
		name  string
		write func(f *Flat)
	}{
		{"delete moves the last", func(f *Flat) { f.Delete("0") }},
		{"update in place", func(f *Flat) { f.Add("2", unit(7)) }},
		{"delete the last then add", func(f *Flat) { f.Delete("5"); f.Add("x", unit(7)) }},
		{"add past the end", func(f *Flat) {
			for i := range 100 {
				f.Add(fmt.Sprint("n", i), unit(7))
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := NewFlat(dim)
			for i := range 6 {
				if err := f.Add(fmt.Sprint(i), unit(i)); err != nil {
					t.Fatal(err)
				}
			}
			ids, vecs := f.snapshot()
			if &vecs[0][0] != &f.data[0] {
				t.Fatal("the snapshot copied the vectors")
			}
			c.write(f)
			for i, id := range ids {
				if id != fmt.Sprint(i) || vecs[i][i] != 1 {
					t.Errorf("after the write, snapshot slot %d = %s %v, want %d %v", i, id, vecs[i], i, unit(i))
				}
			}
		})
	}
}
