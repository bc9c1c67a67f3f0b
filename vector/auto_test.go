package vector_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/engramhq/engram/vector"
)

func TestAuto_ExactWhileSmall(t *testing.T) {
	const dim = 32
	a := vector.NewAuto(dim, vector.AutoConfig{Threshold: 3000})
	m := model{}
	r := rand.New(rand.NewPCG(1, 1))
	for i := range 3000 {
		v := randUnit(r, dim)
		if err := a.Add(idOf(i), v); err != nil {
			t.Fatal(err)
		}
		m[idOf(i)] = v
	}
	if a.Approximate() {
		t.Fatal("approximate at the threshold, want exact")
	}
	for range 50 {
		q := randUnit(r, dim)
		checkExact(t, m, q, a.Search(q, 10, nil), m.search(q, 10, nil))
	}
}

// TestAuto_Switch crosses the threshold while writes keep coming, and
// checks that the graph it switches to has every write, recall holds, and
// shrinking switches back to exact.
func TestAuto_Switch(t *testing.T) {
	const dim = 64
	n := recallSize()
	ids, vecs, queries := clustered(n, dim, 200)
	threshold := n / 2
	a := vector.NewAuto(dim, vector.AutoConfig{Threshold: threshold, HNSW: vector.HNSWConfig{Seed: 1, EfConstruction: testEfc}})
	m := model{}
	for i := 0; i <= threshold; i++ {
		if err := a.Add(ids[i], vecs[i]); err != nil {
			t.Fatal(err)
		}
		m[ids[i]] = vecs[i]
	}
	// The build now runs; these writes land in the Flat and must be
	// replayed onto the graph. Deletes and updates included.
	r := rand.New(rand.NewPCG(2, 2))
	for i := threshold + 1; i < n; i++ {
		if err := a.Add(ids[i], vecs[i]); err != nil {
			t.Fatal(err)
		}
		m[ids[i]] = vecs[i]
		switch j := r.IntN(i); i % 4 {
		case 0:
			a.Delete(ids[j])
			delete(m, ids[j])
		case 1:
			v := vecs[r.IntN(n)]
			if err := a.Add(ids[j], v); err != nil {
				t.Fatal(err)
			}
			m[ids[j]] = v
		}
		if i%500 == 0 {
			q := queries[r.IntN(len(queries))]
			res := a.Search(q, 10, nil)
			// Until the switch, answers stay exact. The switch is one-way
			// here, so if it has not happened after the search, the Flat
			// answered it.
			if !a.Approximate() {
				checkExact(t, m, q, res, m.search(q, 10, nil))
			}
		}
	}
	if err := a.Wait(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !a.Approximate() {
		t.Fatal("still exact after the build finished")
	}
	if got, want := a.Len(), len(m); got != want {
		t.Fatalf("Len %d, want %d", got, want)
	}
	if got := recallAt10(a, m, queries); got < 0.95 {
		t.Fatalf("recall@10 after the switch %.4f, want >= 0.95", got)
	}
	// Every write made during the build reached the graph: no deleted id
	// and no stale vector is returned.
	for i, id := range ids {
		for _, hit := range a.Search(vecs[i], 10, nil) {
			if hit.ID != id {
				continue
			}
			v, live := m[id]
			if !live {
				t.Fatalf("deleted %s returned", id)
			}
			if d := math.Abs(float64(hit.Score - dot64(v, vecs[i]))); d > scoreTol {
				t.Fatalf("%s returned with a stale vector: score %v, want %v", id, hit.Score, dot64(v, vecs[i]))
			}
		}
	}
	// Shrink below half the threshold: back to exact.
	for id := range m {
		if len(m) < threshold/2 {
			break
		}
		a.Delete(id)
		delete(m, id)
	}
	if a.Approximate() {
		t.Fatal("still approximate below half the threshold")
	}
	for _, q := range queries[:50] {
		checkExact(t, m, q, a.Search(q, 10, nil), m.search(q, 10, nil))
	}
}
