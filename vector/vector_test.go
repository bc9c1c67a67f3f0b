package vector_test

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vector"
	"github.com/engramhq/engram/vector/internal/synth"
)

// model is the reference: a plain map scored with plain float64 loops.
type model map[string][]float32

func (m model) search(q []float32, k int, keep func(string) bool) []vector.Result {
	var all []vector.Result
	for id, v := range m {
		if keep != nil && !keep(id) {
			continue
		}
		var s float64
		for i := range q {
			s += float64(q[i]) * float64(v[i])
		}
		all = append(all, vector.Result{ID: id, Score: float32(s)})
	}
	slices.SortFunc(all, func(a, b vector.Result) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return all[:min(k, len(all))]
}

// scoreTol absorbs the difference between SIMD float32 and float64 sums.
const scoreTol = 1e-4

// checkExact fails unless got is want up to float rounding: same length,
// scores equal position by position, every score the true score of its
// id, and the same ids wherever the ranking is not a near-tie.
func checkExact(t *testing.T, m model, q []float32, got, want []vector.Result) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d results, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i].Score - want[i].Score)); d > scoreTol {
			t.Fatalf("result %d: score %v, want %v", i, got[i].Score, want[i].Score)
		}
		v, ok := m[got[i].ID]
		if !ok {
			t.Fatalf("result %d: id %q is not stored", i, got[i].ID)
		}
		if d := math.Abs(float64(got[i].Score - dot64(q, v))); d > scoreTol {
			t.Fatalf("result %d: id %q has score %v, its vector scores %v", i, got[i].ID, got[i].Score, dot64(q, v))
		}
		if i > 0 && got[i].Score > got[i-1].Score {
			t.Fatalf("results not best first at %d: %v > %v", i, got[i].Score, got[i-1].Score)
		}
	}
	if len(want) == 0 {
		return
	}
	// Near the cut-off a near-tie may resolve either way; above it the
	// id sets must agree.
	cut := want[len(want)-1].Score + 2*scoreTol
	gotIDs := map[string]bool{}
	for _, r := range got {
		gotIDs[r.ID] = true
	}
	for _, r := range want {
		if r.Score > cut && !gotIDs[r.ID] {
			t.Fatalf("id %q (score %v) missing from results", r.ID, r.Score)
		}
	}
}

func dot64(a, b []float32) float32 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return float32(s)
}

func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	synth.Normalize(v)
	return v
}

func idOf(i int) string { return fmt.Sprintf("id%06d", i) }

// recall is the fraction of want's ids that got contains.
func recall(got, want []vector.Result) (hit, total int) {
	ids := map[string]bool{}
	for _, r := range got {
		ids[r.ID] = true
	}
	for _, r := range want {
		if ids[r.ID] {
			hit++
		}
	}
	return hit, len(want)
}

// indexes are constructors for every index, for the behaviour all must
// share.
var indexes = []struct {
	name string
	new  func(dim int) vector.Index
}{
	{"Flat", func(dim int) vector.Index { return vector.NewFlat(dim) }},
	{"HNSW", func(dim int) vector.Index {
		return vector.NewHNSW(dim, vector.HNSWConfig{Seed: 1, EfConstruction: testEfc})
	}},
	{"IVF", func(dim int) vector.Index { return vector.NewIVF(dim, vector.IVFConfig{}) }},
	{"IVF/trained", trainedIVF},
	{"Auto", func(dim int) vector.Index { return vector.NewAuto(dim, vector.AutoConfig{Threshold: 300}) }},
}

func TestIndex_AddInvalid(t *testing.T) {
	const dim = 8
	good := make([]float32, dim)
	good[0] = 1
	nan := slices.Clone(good)
	nan[3] = float32(math.NaN())
	inf := slices.Clone(good)
	inf[3] = float32(math.Inf(1))
	long := make([]float32, dim)
	long[0] = 2
	for _, ix := range indexes {
		for _, tc := range []struct {
			name string
			id   string
			v    []float32
		}{
			{"short", "a", good[:dim-1]},
			{"long", "a", append(slices.Clone(good), 0)},
			{"nil", "a", nil},
			{"nan", "a", nan},
			{"inf", "a", inf},
			{"zero", "a", make([]float32, dim)},
			{"not normalised", "a", long},
			{"empty id", "", good},
		} {
			t.Run(ix.name+"/"+tc.name, func(t *testing.T) {
				x := ix.new(dim)
				old := make([]float32, dim)
				old[1] = 1
				if err := x.Add("a", old); err != nil {
					t.Fatal(err)
				}
				err := x.Add(tc.id, tc.v)
				if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
					t.Fatalf("error code %q (%v), want %q", got, err, want)
				}
				if got, want := x.Len(), 1; got != want {
					t.Fatalf("Len %d, want %d", got, want)
				}
				// A failed replace keeps the old vector.
				res := x.Search(old, 1, nil)
				if len(res) != 1 || res[0].ID != "a" || res[0].Score < 0.999 {
					t.Fatalf("old vector lost: %v", res)
				}
			})
		}
	}
}

func TestIndex_BadQueryAndK(t *testing.T) {
	const dim = 4
	for _, ix := range indexes {
		t.Run(ix.name, func(t *testing.T) {
			x := ix.new(dim)
			if got := x.Search([]float32{1, 0, 0, 0}, 3, nil); len(got) != 0 {
				t.Fatalf("empty index returned %v", got)
			}
			if err := x.Add("a", []float32{1, 0, 0, 0}); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				q    []float32
				k    int
			}{
				{"short query", []float32{1, 0, 0}, 3},
				{"nan query", []float32{float32(math.NaN()), 0, 0, 0}, 3},
				{"k zero", []float32{1, 0, 0, 0}, 0},
				{"k negative", []float32{1, 0, 0, 0}, -1},
			} {
				if got := x.Search(tc.q, tc.k, nil); got != nil {
					t.Errorf("%s: got %v, want nil", tc.name, got)
				}
			}
			if got := x.Search([]float32{1, 0, 0, 0}, 5, nil); len(got) != 1 || got[0].ID != "a" {
				t.Fatalf("k above Len: got %v, want only a", got)
			}
			if got, want := x.Dim(), dim; got != want {
				t.Fatalf("Dim %d, want %d", got, want)
			}
			if x.Delete("missing") {
				t.Fatal("Delete of a missing id reported true")
			}
			if !x.Delete("a") || x.Len() != 0 {
				t.Fatalf("Delete a: Len %d after", x.Len())
			}
			if got := x.Search([]float32{1, 0, 0, 0}, 3, nil); len(got) != 0 {
				t.Fatalf("emptied index returned %v", got)
			}
			// An emptied index takes vectors again.
			if err := x.Add("b", []float32{0, 1, 0, 0}); err != nil {
				t.Fatal(err)
			}
			if got := x.Search([]float32{0, 1, 0, 0}, 3, nil); len(got) != 1 || got[0].ID != "b" {
				t.Fatalf("after re-add: got %v", got)
			}
		})
	}
}

// TestIndex_Mutations checks, for every index, that deletes, updates and
// filters hold exactly, whatever the approximation: a deleted id is never
// returned, an updated id is found by its new vector and not its old one,
// no filtered-out id is returned, and k results come back whenever k ids
// pass the filter.
func TestIndex_Mutations(t *testing.T) {
	const dim, n = 32, 2000
	for _, ix := range indexes {
		t.Run(ix.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 7))
			x := ix.new(dim)
			m := model{}
			for i := range n {
				v := randUnit(r, dim)
				if err := x.Add(idOf(i), v); err != nil {
					t.Fatal(err)
				}
				m[idOf(i)] = v
			}
			deleted := map[string]bool{}
			for i := 0; i < n; i += 5 {
				if !x.Delete(idOf(i)) {
					t.Fatalf("Delete %s reported false", idOf(i))
				}
				delete(m, idOf(i))
				deleted[idOf(i)] = true
			}
			old := map[string][]float32{}
			for i := 1; i < n; i += 7 {
				if deleted[idOf(i)] {
					continue
				}
				old[idOf(i)] = m[idOf(i)]
				v := randUnit(r, dim)
				if err := x.Add(idOf(i), v); err != nil {
					t.Fatal(err)
				}
				m[idOf(i)] = v
			}
			if got, want := x.Len(), len(m); got != want {
				t.Fatalf("Len %d, want %d", got, want)
			}
			for id, v := range old {
				res := x.Search(v, 10, nil)
				for _, hit := range res {
					if hit.ID == id {
						t.Fatalf("updated %s found by its old vector: %v", id, res)
					}
				}
				res = x.Search(m[id], 1, nil)
				if len(res) != 1 || res[0].ID != id || res[0].Score < 0.999 {
					t.Fatalf("updated %s not found by its new vector: %v", id, res)
				}
			}
			for i := 0; i < n; i += 5 {
				v := randUnit(r, dim)
				for _, hit := range x.Search(v, 50, nil) {
					if deleted[hit.ID] {
						t.Fatalf("deleted %s returned", hit.ID)
					}
				}
			}
			// Filters: a broad one, and one so narrow that an
			// approximate index must look past its usual candidates.
			for _, mod := range []int{2, 97} {
				keep := func(id string) bool {
					var i int
					fmt.Sscanf(id, "id%d", &i)
					return i%mod == 0
				}
				passing := 0
				for id := range m {
					if keep(id) {
						passing++
					}
				}
				for range 20 {
					q := randUnit(r, dim)
					for _, k := range []int{1, 10, passing + 5} {
						res := x.Search(q, k, keep)
						if got, want := len(res), min(k, passing); got != want {
							t.Fatalf("filter %%%d k=%d: %d results, want %d", mod, k, got, want)
						}
						for _, hit := range res {
							if !keep(hit.ID) || deleted[hit.ID] {
								t.Fatalf("filter %%%d: %s returned", mod, hit.ID)
							}
						}
					}
				}
			}
		})
	}
}

// TestIndex_Concurrent runs writers and searchers together; the race
// detector checks the locking, and the end state must match the model.
func TestIndex_Concurrent(t *testing.T) {
	const dim, n = 16, 600
	for _, ix := range indexes {
		t.Run(ix.name, func(t *testing.T) {
			x := ix.new(dim)
			vecs := make([][]float32, n)
			r := rand.New(rand.NewPCG(3, 4))
			for i := range vecs {
				vecs[i] = randUnit(r, dim)
			}
			done := make(chan struct{})
			errs := make(chan error, 2)
			for w := range 2 {
				go func() {
					// Writer w owns ids ≡ w mod 2: add all, delete every third.
					for i := w; i < n; i += 2 {
						if err := x.Add(idOf(i), vecs[i]); err != nil {
							errs <- err
							return
						}
						if i%3 == 0 {
							x.Delete(idOf(i))
						}
					}
					errs <- nil
				}()
			}
			for range 2 {
				go func() {
					r := rand.New(rand.NewPCG(5, 6))
					for {
						select {
						case <-done:
							return
						default:
						}
						res := x.Search(randUnit(r, dim), 5, func(id string) bool { return id != "" })
						for i := 1; i < len(res); i++ {
							if res[i].Score > res[i-1].Score {
								panic("results out of order")
							}
						}
						_ = x.Len()
					}
				}()
			}
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			close(done)
			if a, ok := x.(*vector.Auto); ok {
				if err := a.Wait(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			want := 0
			for i := range n {
				res := x.Search(vecs[i], 1, nil)
				if i%3 == 0 {
					if len(res) > 0 && res[0].ID == idOf(i) {
						t.Fatalf("deleted %s found", idOf(i))
					}
					continue
				}
				want++
				if len(res) != 1 || res[0].ID != idOf(i) {
					t.Fatalf("%s not found by its own vector: %v", idOf(i), res)
				}
			}
			if got := x.Len(); got != want {
				t.Fatalf("Len %d, want %d", got, want)
			}
		})
	}
}

// trainedIVF returns an empty IVF whose lists were trained on 1,000 random
// vectors, so that adds spread over 32 lists.
func trainedIVF(dim int) vector.Index {
	r := rand.New(rand.NewPCG(11, 12))
	ids := make([]string, 1000)
	vecs := make([][]float32, len(ids))
	for i := range ids {
		ids[i], vecs[i] = fmt.Sprintf("train%d", i), randUnit(r, dim)
	}
	x, err := vector.BuildIVF(dim, ids, vecs, vector.IVFConfig{NProbe: 4, Seed: 1})
	if err != nil {
		panic(err)
	}
	for _, id := range ids {
		x.Delete(id)
	}
	return x
}
