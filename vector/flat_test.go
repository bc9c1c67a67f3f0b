package vector_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/engramhq/engram/vector"
)

// TestFlat_MatchesModel drives a Flat and the reference model through the
// same random adds, updates and deletes and compares searches at every
// stage, with the one- and the two-goroutine scan.
func TestFlat_MatchesModel(t *testing.T) {
	for _, tc := range []struct {
		name  string
		split int
	}{{"serial", math.MaxInt}, {"split", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			defer vector.SetParallelFloats(tc.split)()
			testFlatMatchesModel(t)
		})
	}
}

func testFlatMatchesModel(t *testing.T) {
	const dim = 64
	r := rand.New(rand.NewPCG(1, 2))
	f := vector.NewFlat(dim)
	m := model{}
	check := func(stage string) {
		t.Helper()
		if got, want := f.Len(), len(m); got != want {
			t.Fatalf("%s: Len %d, want %d", stage, got, want)
		}
		for range 20 {
			q := randUnit(r, dim)
			for _, k := range []int{1, 10, 100} {
				checkExact(t, m, q, f.Search(q, k, nil), m.search(q, k, nil))
			}
			keep := func(id string) bool { return strings.HasSuffix(id, "3") }
			checkExact(t, m, q, f.Search(q, 10, keep), m.search(q, 10, keep))
		}
	}
	for i := range 5000 {
		v := randUnit(r, dim)
		if err := f.Add(idOf(i), v); err != nil {
			t.Fatal(err)
		}
		m[idOf(i)] = v
	}
	check("after adds")
	for range 1500 {
		i := r.IntN(5000)
		if got, want := f.Delete(idOf(i)), m[idOf(i)] != nil; got != want {
			t.Fatalf("Delete %s = %v, want %v", idOf(i), got, want)
		}
		delete(m, idOf(i))
	}
	check("after deletes")
	for range 1500 {
		i := r.IntN(6000) // updates of live, deleted and new ids
		v := randUnit(r, dim)
		if err := f.Add(idOf(i), v); err != nil {
			t.Fatal(err)
		}
		m[idOf(i)] = v
	}
	check("after updates")
}
