package vector_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/engramhq/engram/vector"
	"github.com/engramhq/engram/vector/internal/synth"
)

// clustered returns n ids and clustered unit vectors, and queries from the
// same mixture.
func clustered(n, dim, queries int) ([]string, [][]float32, [][]float32) {
	mix := synth.NewMixture(42, dim, max(1, n/100), 1)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = idOf(i)
	}
	return ids, synth.Rows(mix.Sample(1, n), dim), synth.Rows(mix.Sample(2, queries), dim)
}

// recallAt10 is the mean recall@10 of x against the model over queries.
func recallAt10(x vector.Index, m model, queries [][]float32) float64 {
	hit, total := 0, 0
	for _, q := range queries {
		h, n := recall(x.Search(q, 10, nil), m.search(q, 10, nil))
		hit += h
		total += n
	}
	return float64(hit) / float64(total)
}

func recallSize() int {
	if raceEnabled {
		return 2500
	}
	return 20000
}

// recallCase returns recallSize clustered vectors of dim, 200 queries
// from the same mixture, and the exact model of the vectors.
func recallCase(dim int) ([]string, [][]float32, [][]float32, model) {
	ids, vecs, queries := clustered(recallSize(), dim, 200)
	m := model{}
	for i, id := range ids {
		m[id] = vecs[i]
	}
	return ids, vecs, queries, m
}

func TestHNSW_Recall(t *testing.T) {
	const dim = 64
	ids, vecs, queries, m := recallCase(dim)
	n := len(ids)
	for _, tc := range []struct {
		name    string
		workers int
	}{{"parallel", 2}, {"sequential", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			h := vector.NewHNSW(dim, vector.HNSWConfig{Workers: tc.workers, Seed: 1, EfConstruction: testEfc})
			if err := h.AddBatch(ids, vecs); err != nil {
				t.Fatal(err)
			}
			if got, want := h.Len(), n; got != want {
				t.Fatalf("Len %d, want %d", got, want)
			}
			if got := recallAt10(h, m, queries); got < 0.95 {
				t.Fatalf("recall@10 %.4f, want >= 0.95", got)
			} else {
				t.Logf("recall@10 %.4f on %d vectors", got, n)
			}
		})
	}
}

// TestHNSW_RecallAfterChurn deletes and updates a third of a built graph,
// then adds new vectors into the freed slots, and checks that recall holds
// at each stage: tombstones must route, and slot reuse must repair links.
func TestHNSW_RecallAfterChurn(t *testing.T) {
	const dim = 64
	n := recallSize()
	ids, vecs, queries := clustered(n, dim, 200)
	extra := synth.Rows(synth.NewMixture(42, dim, max(1, n/100), 1).Sample(3, n/5), dim)
	h := vector.NewHNSW(dim, vector.HNSWConfig{Seed: 1, EfConstruction: testEfc})
	if err := h.AddBatch(ids, vecs); err != nil {
		t.Fatal(err)
	}
	m := model{}
	for i, id := range ids {
		m[id] = vecs[i]
	}
	r := rand.New(rand.NewPCG(9, 9))
	for _, i := range r.Perm(n)[:n/5] {
		h.Delete(ids[i])
		delete(m, ids[i])
	}
	if got := recallAt10(h, m, queries); got < 0.95 {
		t.Fatalf("after deletes: recall@10 %.4f, want >= 0.95", got)
	}
	// Move a tenth of the survivors to other vectors of the mixture, one
	// by one as the service would.
	moved := 0
	for _, id := range slices.Sorted(maps.Keys(m)) { // a fixed order: the run repeats
		if moved == n/10 {
			break
		}
		if err := h.Add(id, extra[moved]); err != nil {
			t.Fatal(err)
		}
		m[id] = extra[moved]
		moved++
	}
	if got := recallAt10(h, m, queries); got < 0.95 {
		t.Fatalf("after updates: recall@10 %.4f, want >= 0.95", got)
	}
	// New ids reuse the tombstones.
	var newIDs []string
	var newVecs [][]float32
	for i := moved; i < len(extra); i++ {
		id := fmt.Sprintf("new%06d", i)
		newIDs, newVecs = append(newIDs, id), append(newVecs, extra[i])
		m[id] = extra[i]
	}
	if err := h.AddBatch(newIDs, newVecs); err != nil {
		t.Fatal(err)
	}
	if got, want := h.Len(), len(m); got != want {
		t.Fatalf("Len %d, want %d", got, want)
	}
	if got := recallAt10(h, m, queries); got < 0.95 {
		t.Fatalf("after re-adds: recall@10 %.4f, want >= 0.95", got)
	}
	for id, v := range m {
		if res := h.Search(v, 1, nil); len(res) != 1 || res[0].ID != id && res[0].Score < 0.9999 {
			t.Fatalf("%s not found by its own vector: %v", id, res)
		}
	}
}

func TestHNSW_AddBatchInvalid(t *testing.T) {
	h := vector.NewHNSW(2, vector.HNSWConfig{})
	err := h.AddBatch([]string{"a", "b"}, [][]float32{{1, 0}, {2, 0}})
	if err == nil {
		t.Fatal("AddBatch with an unnormalised vector succeeded")
	}
	if got := h.Len(); got != 0 {
		t.Fatalf("Len %d after a failed batch, want 0: nothing may be stored", got)
	}
	if err := h.AddBatch([]string{"a"}, nil); err == nil {
		t.Fatal("AddBatch with mismatched lengths succeeded")
	}
	// Within one batch the last vector of an id wins.
	if err := h.AddBatch([]string{"a", "a"}, [][]float32{{1, 0}, {0, 1}}); err != nil {
		t.Fatal(err)
	}
	if res := h.Search([]float32{0, 1}, 1, nil); h.Len() != 1 || len(res) != 1 || res[0].Score < 0.999 {
		t.Fatalf("duplicate id in a batch: Len %d, search %v", h.Len(), res)
	}
}
