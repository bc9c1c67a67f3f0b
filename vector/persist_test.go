package vector_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"testing"

	"github.com/engramhq/engram/vector"
)

// savedGraph builds a graph of n clustered vectors, deletes every seventh
// and returns it with its serialised form and the queries.
func savedGraph(t testing.TB, n, dim int) (*vector.HNSW, []byte, [][]float32) {
	t.Helper()
	ids, vecs, queries := clustered(n, dim, 50)
	h := vector.NewHNSW(dim, vector.HNSWConfig{Seed: 3, EfConstruction: testEfc, Workers: 2})
	if err := h.AddBatch(ids, vecs); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i += 7 {
		h.Delete(ids[i])
	}
	var buf bytes.Buffer
	nw, err := h.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := nw, int64(buf.Len()); got != want {
		t.Fatalf("WriteTo reported %d bytes, wrote %d", got, want)
	}
	return h, buf.Bytes(), queries
}

func TestHNSW_WriteReadSameResults(t *testing.T) {
	const dim = 32
	h, data, queries := savedGraph(t, 3000, dim)
	got, err := vector.ReadHNSW(bytes.NewReader(data), 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Len() != h.Len() || got.Dim() != h.Dim() {
		t.Fatalf("loaded %d vectors of %d dims, saved %d of %d", got.Len(), got.Dim(), h.Len(), h.Dim())
	}
	// Searches route through tombstones by their (zeroed) vectors, so
	// compare graphs without tombstones for identical answers: refill
	// every deleted slot first.
	ids, vecs, _ := clustered(3000, dim, 0)
	for i := 0; i < len(ids); i += 7 {
		for _, x := range []*vector.HNSW{h, got} {
			if err := x.Add(ids[i], vecs[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	var buf bytes.Buffer
	if _, err := h.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := vector.ReadHNSW(&buf, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		want := h.Search(q, 10, nil)
		if r := again.Search(q, 10, nil); !slices.Equal(r, want) {
			t.Fatalf("query %d: loaded graph found %v, the saved one %v", i, r, want)
		}
	}
}

func TestHNSW_WriteDropsDeletedVectors(t *testing.T) {
	const dim = 16
	h := vector.NewHNSW(dim, vector.HNSWConfig{Seed: 1})
	ids, vecs, _ := clustered(200, dim, 0)
	if err := h.AddBatch(ids, vecs); err != nil {
		t.Fatal(err)
	}
	secret := vecs[5]
	h.Delete(ids[5])
	var buf bytes.Buffer
	if _, err := h.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 0, dim*4)
	for _, x := range secret {
		raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
	}
	if bytes.Contains(buf.Bytes(), raw) || bytes.Contains(buf.Bytes(), []byte(ids[5])) {
		t.Fatal("the deleted vector or its id is in the written graph")
	}
	got, err := vector.ReadHNSW(&buf, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Search(secret, 200, nil) {
		if r.ID == ids[5] {
			t.Fatal("the loaded graph returns the deleted id")
		}
	}
	if err := got.Add(ids[5], secret); err != nil { // reuses the tombstone
		t.Fatal(err)
	}
	if r := got.Search(secret, 1, nil); len(r) != 1 || r[0].ID != ids[5] {
		t.Fatalf("after re-adding, search found %v", r)
	}
}

func TestReadHNSW_RejectsDamage(t *testing.T) {
	_, data, queries := savedGraph(t, 300, 8)
	for _, cut := range []int{0, 4, 8, 40, len(data) / 3, len(data) / 2, len(data) - 1} {
		if _, err := vector.ReadHNSW(bytes.NewReader(data[:cut]), 1); err == nil {
			t.Errorf("a graph cut to %d of %d bytes was read without error", cut, len(data))
		}
	}
	// A flipped byte anywhere must not make reading or searching panic.
	for i := 0; i < len(data); i += 1 + i/50 {
		bad := bytes.Clone(data)
		bad[i] ^= 0x5a
		h, err := vector.ReadHNSW(bytes.NewReader(bad), 1)
		if err == nil {
			h.Search(queries[0], 5, nil)
		}
	}
}

func TestAuto_Adopt(t *testing.T) {
	const dim = 16
	h, data, queries := savedGraph(t, 500, dim)
	g, err := vector.ReadHNSW(bytes.NewReader(data), 1)
	if err != nil {
		t.Fatal(err)
	}
	a := vector.NewAuto(dim, vector.AutoConfig{Threshold: 100})
	if a.Graph() != nil {
		t.Fatal("an empty Auto reports a graph")
	}
	if err := a.Adopt(g); err != nil {
		t.Fatal(err)
	}
	if !a.Approximate() || a.Graph() != g || a.Len() != h.Len() {
		t.Fatalf("after Adopt: approximate %v, %d vectors", a.Approximate(), a.Len())
	}
	if got, want := a.Search(queries[0], 5, nil), g.Search(queries[0], 5, nil); !slices.Equal(got, want) {
		t.Fatalf("Auto found %v, its graph %v", got, want)
	}
	if err := a.Adopt(g); err == nil {
		t.Fatal("a non-empty Auto adopted a graph")
	}
	if err := vector.NewAuto(dim+1, vector.AutoConfig{}).Adopt(g); err == nil {
		t.Fatal("an Auto adopted a graph of another dimension")
	}
}

func FuzzReadHNSW(f *testing.F) {
	_, data, queries := savedGraph(f, 40, 4)
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := vector.ReadHNSW(bytes.NewReader(b), 1)
		if err != nil {
			return
		}
		h.Search(queries[0], 3, nil)
		ids, vecs, _ := clustered(5, 4, 0)
		_ = h.AddBatch(ids, vecs)
		h.Search(queries[1], 3, nil)
	})
}

// TestHNSW_FileSameEitherPath: the graph written as the floats lie in
// memory and written float by float are the same bytes, and each path
// reads the other's file into a graph answering alike (the in-memory path
// is taken on little-endian machines, the other on the rest).
func TestHNSW_FileSameEitherPath(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("a big-endian machine has only the per-float path")
	}
	const dim = 24
	h := vector.NewHNSW(dim, vector.HNSWConfig{Seed: 3})
	ids, vecs, queries := clustered(700, dim, 20)
	if err := h.AddBatch(ids, vecs); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < len(ids); i += 9 {
		h.Delete(ids[i])
	}
	write := func(native bool) []byte {
		defer vector.SetNativeLittle(native)()
		var buf bytes.Buffer
		if _, err := h.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	fast, slow := write(true), write(false)
	if !bytes.Equal(fast, slow) {
		t.Fatal("the two write paths wrote different files")
	}
	for _, native := range []bool{true, false} {
		restore := vector.SetNativeLittle(native)
		got, err := vector.ReadHNSW(bytes.NewReader(fast), 1)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		for i, q := range queries {
			if r, want := got.Search(q, 10, nil), h.Search(q, 10, nil); !slices.Equal(r, want) {
				t.Fatalf("read natively %v, query %d: found %v, the written graph %v", native, i, r, want)
			}
		}
	}
}
