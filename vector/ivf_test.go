package vector_test

import (
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vector"
)

func TestIVF_Recall(t *testing.T) {
	const dim = 64
	ids, vecs, queries, m := recallCase(dim)
	n := len(ids)
	x, err := vector.BuildIVF(dim, ids, vecs, vector.IVFConfig{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := x.Len(), n; got != want {
		t.Fatalf("Len %d, want %d", got, want)
	}
	if got := recallAt10(x, m, queries); got < 0.95 {
		t.Fatalf("recall@10 %.4f with %d lists, want >= 0.95", got, x.Lists())
	} else {
		t.Logf("recall@10 %.4f on %d vectors, %d lists", got, n, x.Lists())
	}
	// Probing every list is exact.
	x.SetNProbe(x.Lists())
	for _, q := range queries[:20] {
		checkExact(t, m, q, x.Search(q, 10, nil), m.search(q, 10, nil))
	}
}

func TestBuildIVF_Invalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []string
		vecs [][]float32
	}{
		{"mismatched lengths", []string{"a"}, nil},
		{"duplicate id", []string{"a", "a"}, [][]float32{{1, 0}, {0, 1}}},
		{"bad vector", []string{"a", "b"}, [][]float32{{1, 0}, {0, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := vector.BuildIVF(2, tc.ids, tc.vecs, vector.IVFConfig{})
			if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
				t.Fatalf("error code %q (%v), want %q", got, err, want)
			}
		})
	}
}
