package vector

import "testing"

func TestHugeRange(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		p, size, start, n uintptr
	}{
		{0, 2 * mb, 0, 2 * mb},
		{4096, 8 * mb, 2 * mb, 6 * mb},
		{2*mb - 1, 2*mb + 1, 2 * mb, 2 * mb},
		{2*mb + 1, 2*mb + 1, 0, 0}, // no whole huge page inside
		{4096, 4096, 0, 0},
	} {
		start, n := hugeRange(c.p, c.size)
		if start != c.start || n != c.n {
			t.Errorf("hugeRange(%#x, %#x) = %#x, %#x; want %#x, %#x", c.p, c.size, start, n, c.start, c.n)
		}
	}
}

func TestHugeSlices(t *testing.T) {
	f, w := hugeFloats(1<<20), hugeWords(3)
	if len(f) != 1<<20 || len(w) != 3 {
		t.Fatalf("lengths %d, %d", len(f), len(w))
	}
	for _, x := range f {
		if x != 0 {
			t.Fatal("not zeroed")
		}
	}
	if len(hugeFloats(0)) != 0 || len(hugeWords(0)) != 0 {
		t.Error("empty allocations")
	}
}
