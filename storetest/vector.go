package storetest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// Embedder names of the vector tests. The second one looks like what the
// OpenAI client records.
const (
	embA = "test-a"
	embB = "openai:test-b"
)

// vec returns n values that differ for every seed, so a vector stored under
// the wrong memory or field shows.
func vec(seed, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(seed)*0.5 + float32(i)/8 - 1
	}
	return v
}

// oddFloats are values whose bits a lossy encoding would change: negative
// zero, subnormals, the extremes, and fractions with no short decimal form.
var oddFloats = []float32{
	0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	math.MaxFloat32, -math.MaxFloat32, 1.0 / 3, float32(math.Pi), -2.5e-38, 0.1, 16777217,
}

func putVectors(t testing.TB, st engram.Store, n engram.Namespace, id, embedder string, vecs ...engram.FieldVector) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error { return tx.PutVectors(ctx, n, id, embedder, vecs) })
}

func scanVectors(t testing.TB, st engram.Store, s engram.Scope, embedder string) []engram.VectorRecord {
	t.Helper()
	var out []engram.VectorRecord
	view(t, st, func(r engram.Reader) error {
		return r.ScanVectors(ctx, s, embedder, func(v engram.VectorRecord) error {
			out = append(out, v)
			return nil
		})
	})
	return out
}

// vectorKeys returns "memory/field" of each record.
func vectorKeys(vs []engram.VectorRecord) []string {
	return idsOf(vs, func(v engram.VectorRecord) string { return v.MemoryID + "/" + v.Field })
}

// sameBits reports whether a and b hold bit-identical values.
func sameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// wantVectors fails unless got holds exactly the vectors of want, keyed by
// "memory/field", bit for bit, each with the namespace of its memory.
func wantVectors(t testing.TB, what string, got []engram.VectorRecord, want map[string][]float32, ns map[string]engram.Namespace) {
	t.Helper()
	var wantKeys []string
	for k := range want {
		wantKeys = append(wantKeys, k)
	}
	if keys := vectorKeys(got); !sameSet(keys, wantKeys) {
		t.Errorf("%s: vectors %v, want %v", what, keys, wantKeys)
		return
	}
	for _, v := range got {
		if w := want[v.MemoryID+"/"+v.Field]; !sameBits(v.Vec, w) {
			t.Errorf("%s: %s/%s = %v, want %v", what, v.MemoryID, v.Field, v.Vec, w)
		}
		if n, ok := ns[v.MemoryID]; ok && v.Namespace != n {
			t.Errorf("%s: %s has namespace %+v, want %+v", what, v.MemoryID, v.Namespace, n)
		}
	}
}

func testScanVectors(t *testing.T, open Opener) {
	st := open(t)
	mk := func(ns engram.Namespace, status engram.Status) *engram.Memory {
		m := Memory(ns, "vector holder "+string(status))
		m.Status = status
		return m
	}
	m1 := mk(nsU1, engram.StatusActive)
	deleted, superseded, expired := mk(nsU1, engram.StatusDeleted), mk(nsU1, engram.StatusSuperseded), mk(nsU1, engram.StatusExpired)
	otherUser := mk(nsU2, engram.StatusActive)
	shared := mk(engram.Namespace{Org: "acme", Project: "app"}, engram.StatusActive)
	twin := *m1 // the same id in another tenant
	twin.Namespace = nsOther
	Put(t, st, m1, deleted, superseded, expired, otherUser, shared, &twin)

	abs, val := slices.Clone(oddFloats), vec(1, len(oddFloats))
	putVectors(t, st, nsU1, m1.ID, embA, engram.FieldVector{Field: engram.FieldAbstraction, Vec: abs},
		engram.FieldVector{Field: engram.FieldValue, Vec: val})
	putVectors(t, st, nsU1, m1.ID, embB, engram.FieldVector{Field: engram.FieldValue, Vec: vec(2, 3)})
	for i, m := range []*engram.Memory{deleted, superseded, expired, otherUser, shared, &twin} {
		putVectors(t, st, m.Namespace, m.ID, embA, engram.FieldVector{Field: engram.FieldValue, Vec: vec(10+i, len(oddFloats))})
	}
	ns := map[string]engram.Namespace{m1.ID: nsU1, deleted.ID: nsU1, shared.ID: shared.Namespace, otherUser.ID: nsU2}

	// Only active memories, only the scope, only the embedder asked for.
	wantVectors(t, "ScanVectors u1 embedder A", scanVectors(t, st, scU1, embA),
		map[string][]float32{m1.ID + "/abstraction": abs, m1.ID + "/value": val}, ns)
	wantVectors(t, "ScanVectors u1 embedder B", scanVectors(t, st, scU1, embB),
		map[string][]float32{m1.ID + "/value": vec(2, 3)}, ns)
	wantVectors(t, "ScanVectors u1 unknown embedder", scanVectors(t, st, scU1, "none"), nil, ns)
	withShared := scU1
	withShared.IncludeShared = true
	wantVectors(t, "ScanVectors u1 with shared", scanVectors(t, st, withShared, embA),
		map[string][]float32{m1.ID + "/abstraction": abs, m1.ID + "/value": val, shared.ID + "/value": vec(14, len(oddFloats))}, ns)
	// The twin's vectors come back in its own tenant, under its namespace.
	wantVectors(t, "ScanVectors other tenant", scanVectors(t, st, engram.ScopeOf(nsOther), embA),
		map[string][]float32{twin.ID + "/value": vec(15, len(oddFloats))}, map[string]engram.Namespace{twin.ID: nsOther})

	// The status is read when scanning, and a replace keeps the vectors.
	restored, gone := *deleted, *m1
	restored.Status, gone.Status = engram.StatusActive, engram.StatusDeleted
	update(t, st, func(tx engram.Tx) error {
		if err := tx.ReplaceMemory(ctx, &restored); err != nil {
			return err
		}
		return tx.ReplaceMemory(ctx, &gone)
	})
	wantVectors(t, "ScanVectors after a restore and a delete", scanVectors(t, st, scU1, embA),
		map[string][]float32{deleted.ID + "/value": vec(10, len(oddFloats))}, ns)

	// An error from fn stops the scan and comes back as is.
	putVectors(t, st, nsU1, restored.ID, embA, engram.FieldVector{Field: engram.FieldAbstraction, Vec: vec(3, 2)},
		engram.FieldVector{Field: engram.FieldValue, Vec: vec(4, 2)})
	calls := 0
	err := st.View(ctx, func(r engram.Reader) error {
		return r.ScanVectors(ctx, scU1, embA, func(engram.VectorRecord) error {
			calls++
			return errBoom
		})
	})
	if !errors.Is(err, errBoom) || calls != 1 {
		t.Errorf("ScanVectors with a failing fn: %v after %d calls, want fn's error after 1", err, calls)
	}
	err = st.View(ctx, func(r engram.Reader) error {
		return r.ScanVectors(ctx, scU1, "", func(engram.VectorRecord) error { return nil })
	})
	wantCode(t, "ScanVectors with no embedder", err, engram.EINVALID)
}

func testPutVectors(t *testing.T, open Opener) {
	st := open(t)
	m := Memory(nsU1, "embedded")
	foreign := Memory(nsOther, "only in another tenant")
	twin := *m
	twin.Namespace = nsOther
	Put(t, st, m, foreign, &twin)
	ns := map[string]engram.Namespace{m.ID: nsU1}
	absA, valA, valB := vec(1, 3), vec(2, 3), vec(3, 5)
	putVectors(t, st, nsU1, m.ID, embA, engram.FieldVector{Field: engram.FieldAbstraction, Vec: absA},
		engram.FieldVector{Field: engram.FieldValue, Vec: valA})
	putVectors(t, st, nsU1, m.ID, embB, engram.FieldVector{Field: engram.FieldValue, Vec: valB})
	putVectors(t, st, nsOther, twin.ID, embA, engram.FieldVector{Field: engram.FieldValue, Vec: vec(9, 3)})
	wantA := map[string][]float32{m.ID + "/abstraction": absA, m.ID + "/value": valA}
	wantB := map[string][]float32{m.ID + "/value": valB}
	wantVectors(t, "embedder A", scanVectors(t, st, scU1, embA), wantA, ns)
	wantVectors(t, "embedder B", scanVectors(t, st, scU1, embB), wantB, ns)

	// Bad calls are refused before anything is written: fn ignores the
	// error and commits, and the stored vectors are still the old ones.
	long := engram.FieldVector{Field: engram.FieldValue, Vec: vec(4, 4)}
	for _, c := range []struct {
		name     string
		n        engram.Namespace
		id, emb  string
		vecs     []engram.FieldVector
		wantCode string
	}{
		{"unknown field", nsU1, m.ID, embA, []engram.FieldVector{{Field: "cues", Vec: vec(1, 3)}}, engram.EINVALID},
		{"no field", nsU1, m.ID, embA, []engram.FieldVector{{Vec: vec(1, 3)}}, engram.EINVALID},
		{"empty vector", nsU1, m.ID, embA, []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{}}}, engram.EINVALID},
		{"nil vector", nsU1, m.ID, embA, []engram.FieldVector{{Field: engram.FieldAbstraction, Vec: vec(1, 3)}, {Field: engram.FieldValue}}, engram.EINVALID},
		{"different lengths", nsU1, m.ID, embA, []engram.FieldVector{{Field: engram.FieldAbstraction, Vec: vec(1, 3)}, long}, engram.EINVALID},
		{"field twice", nsU1, m.ID, embA, []engram.FieldVector{{Field: engram.FieldValue, Vec: vec(1, 3)}, {Field: engram.FieldValue, Vec: vec(2, 3)}}, engram.EINVALID},
		{"NaN", nsU1, m.ID, embA, []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{1, float32(math.NaN())}}}, engram.EINVALID},
		{"infinity", nsU1, m.ID, embA, []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{float32(math.Inf(-1)), 1}}}, engram.EINVALID},
		{"no embedder", nsU1, m.ID, "", []engram.FieldVector{long}, engram.EINVALID},
		{"malformed id", nsU1, "nope", embA, []engram.FieldVector{long}, engram.EINVALID},
		{"bad tenant", engram.Namespace{Project: "app"}, m.ID, embA, []engram.FieldVector{long}, engram.EINVALID},
		{"unknown memory", nsU1, engram.NewID(), embA, []engram.FieldVector{long}, engram.ENOTFOUND},
		{"memory of another tenant", nsU1, foreign.ID, embA, []engram.FieldVector{long}, engram.ENOTFOUND},
	} {
		var err error
		update(t, st, func(tx engram.Tx) error {
			err = tx.PutVectors(ctx, c.n, c.id, c.emb, c.vecs)
			return nil
		})
		wantCode(t, "PutVectors with "+c.name, err, c.wantCode)
	}
	wantVectors(t, "embedder A after refused calls", scanVectors(t, st, scU1, embA), wantA, ns)
	wantVectors(t, "embedder B after refused calls", scanVectors(t, st, scU1, embB), wantB, ns)

	// A put replaces that embedder's vectors of the memory, fields it does
	// not name included, and touches neither other embedders nor the same
	// id in another tenant. The tenant and user alone find the memory
	// (memory ids are unique per user), whatever agent the caller names.
	putVectors(t, st, engram.Namespace{Org: "acme", Project: "app", User: nsU1.User, Agent: "other"}, m.ID, embA, long)
	wantVectors(t, "embedder A after a replace", scanVectors(t, st, scU1, embA), map[string][]float32{m.ID + "/value": long.Vec}, ns)
	wantVectors(t, "embedder B after replacing A", scanVectors(t, st, scU1, embB), wantB, ns)
	wantVectors(t, "the twin after replacing A", scanVectors(t, st, engram.ScopeOf(nsOther), embA),
		map[string][]float32{twin.ID + "/value": vec(9, 3)}, nil)
	// No vectors removes them.
	putVectors(t, st, nsU1, m.ID, embA)
	wantVectors(t, "embedder A after putting none", scanVectors(t, st, scU1, embA), nil, ns)
	wantVectors(t, "embedder B after putting no A", scanVectors(t, st, scU1, embB), wantB, ns)
}

func testDeleteVectorsExcept(t *testing.T, open Opener) {
	st := open(t)
	a, b := Memory(nsU1, "a"), Memory(nsOther, "b")
	Put(t, st, a, b)
	abs := func(seed int) engram.FieldVector {
		return engram.FieldVector{Field: engram.FieldAbstraction, Vec: vec(seed, 2)}
	}
	val := func(seed int) engram.FieldVector {
		return engram.FieldVector{Field: engram.FieldValue, Vec: vec(seed, 2)}
	}
	putVectors(t, st, nsU1, a.ID, embA, abs(1), val(2))
	putVectors(t, st, nsU1, a.ID, embB, val(3))
	putVectors(t, st, nsU1, a.ID, "keep", abs(4), val(5))
	putVectors(t, st, nsOther, b.ID, embA, val(6))
	putVectors(t, st, nsOther, b.ID, "keep", abs(7), val(8))

	deleteExcept := func(embedder string) (int, error) {
		var n int
		err := st.Update(ctx, func(tx engram.Tx) error {
			var err error
			n, err = tx.DeleteVectorsExcept(ctx, embedder)
			return err
		})
		return n, err
	}
	_, err := deleteExcept("")
	wantCode(t, "DeleteVectorsExcept with no embedder", err, engram.EINVALID)
	if n, err := deleteExcept("keep"); err != nil || n != 4 {
		t.Errorf("DeleteVectorsExcept(keep) = %d, %v; want 4 in both tenants", n, err)
	}
	for _, s := range []engram.Scope{scU1, engram.ScopeOf(nsOther)} {
		for _, e := range []string{embA, embB} {
			if got := scanVectors(t, st, s, e); len(got) != 0 {
				t.Errorf("%s vectors in %+v after deleting all but keep: %v", e, s, vectorKeys(got))
			}
		}
	}
	wantVectors(t, "kept vectors of u1", scanVectors(t, st, scU1, "keep"),
		map[string][]float32{a.ID + "/abstraction": vec(4, 2), a.ID + "/value": vec(5, 2)}, nil)
	wantVectors(t, "kept vectors of the other tenant", scanVectors(t, st, engram.ScopeOf(nsOther), "keep"),
		map[string][]float32{b.ID + "/abstraction": vec(7, 2), b.ID + "/value": vec(8, 2)}, nil)
	if n, err := deleteExcept("keep"); err != nil || n != 0 {
		t.Errorf("DeleteVectorsExcept(keep) again = %d, %v; want 0", n, err)
	}
	if n, err := deleteExcept("other"); err != nil || n != 4 {
		t.Errorf("DeleteVectorsExcept(other) = %d, %v; want the 4 kept ones", n, err)
	}
}

// testPurgeVectors shows that purges remove the vectors of every embedder:
// a memory re-inserted under a purged id has none, and counting what
// DeleteVectorsExcept removes at the end finds no vector left behind.
func testPurgeVectors(t *testing.T, open Opener) {
	st := open(t)
	m1, m2, m3 := Memory(nsU1, "one"), Memory(nsU1, "two"), Memory(nsU2, "three")
	Put(t, st, m1, m2, m3)
	for i, m := range []*engram.Memory{m1, m2, m3} {
		putVectors(t, st, m.Namespace, m.ID, embA, engram.FieldVector{Field: engram.FieldAbstraction, Vec: vec(i, 2)},
			engram.FieldVector{Field: engram.FieldValue, Vec: vec(i+10, 2)})
		putVectors(t, st, m.Namespace, m.ID, embB, engram.FieldVector{Field: engram.FieldValue, Vec: vec(i+20, 4)})
	}
	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, m1.ID) })
	Put(t, st, m1)
	for _, e := range []string{embA, embB} {
		for _, k := range vectorKeys(scanVectors(t, st, scU1, e)) {
			if strings.HasPrefix(k, m1.ID+"/") {
				t.Errorf("a memory re-inserted after PurgeMemory has its old %s vector %s", e, k)
			}
		}
	}
	update(t, st, func(tx engram.Tx) error {
		_, err := tx.PurgeScope(ctx, scU1)
		return err
	})
	Put(t, st, m1, m2)
	for _, e := range []string{embA, embB} {
		if got := scanVectors(t, st, scU1, e); len(got) != 0 {
			t.Errorf("memories re-inserted after PurgeScope have old %s vectors %v", e, vectorKeys(got))
		}
	}
	u2 := map[string]engram.Namespace{m3.ID: nsU2}
	wantVectors(t, "u2's vectors after purging u1", scanVectors(t, st, engram.ScopeOf(nsU2), embA),
		map[string][]float32{m3.ID + "/abstraction": vec(2, 2), m3.ID + "/value": vec(12, 2)}, u2)
	wantVectors(t, "u2's B vectors after purging u1", scanVectors(t, st, engram.ScopeOf(nsU2), embB),
		map[string][]float32{m3.ID + "/value": vec(22, 4)}, u2)
	var n int
	update(t, st, func(tx engram.Tx) error {
		var err error
		n, err = tx.DeleteVectorsExcept(ctx, "none")
		return err
	})
	if n != 3 {
		t.Errorf("%d vectors stored after the purges, want u2's 3", n)
	}
}

// scopeVectorCheck compares ScanVectors over s with the embedder A vectors
// of the scope fixtures s contains.
func scopeVectorCheck(t *testing.T, st engram.Store, s engram.Scope, fs []scopeFixture) {
	t.Helper()
	want := map[string][]float32{}
	ns := map[string]engram.Namespace{}
	for _, f := range fs {
		ns[f.memory.ID] = f.ns
		if s.Contains(f.ns) {
			for _, v := range f.vectors {
				want[f.memory.ID+"/"+v.Field] = v.Vec
			}
		}
	}
	wantVectors(t, fmt.Sprintf("ScanVectors(%+v)", s), scanVectors(t, st, s, embA), want, ns)
}
