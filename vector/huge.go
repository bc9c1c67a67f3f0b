package vector

import "unsafe"

// hugeFloats returns n zeroed floats in memory the kernel is asked to back
// with huge pages (see adviseHuge), for the big, long-lived arrays of a
// graph: its vectors and bottom-layer links.
func hugeFloats(n int) []float32 {
	s := make([]float32, n)
	if n > 0 {
		adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*4)
	}
	return s
}

// hugeWords is hugeFloats for uint32s.
func hugeWords(n int) []uint32 {
	s := make([]uint32, n)
	if n > 0 {
		adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), uintptr(n)*4)
	}
	return s
}

// hugePage is the size of a transparent huge page on the platforms that
// have them (x86-64 and most arm64 kernels).
const hugePage = 2 << 20

// hugeRange returns the whole huge pages within [p, p+size): their start
// and length, 0 when none fits.
func hugeRange(p, size uintptr) (start, length uintptr) {
	start = (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + size) &^ (hugePage - 1)
	if end <= start {
		return 0, 0
	}
	return start, end - start
}
