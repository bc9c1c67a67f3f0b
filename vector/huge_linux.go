package vector

import (
	"syscall"
	"unsafe"
)

// adviseHuge asks Linux to back the whole huge pages within [p, p+size)
// with transparent huge pages (madvise MADV_HUGEPAGE), which takes effect
// for pages not yet touched. Memory touched for the first time faults in
// one page at a time, and a graph's gigabytes of vectors read after a
// restart spent most of their time there; huge pages also spare searches
// TLB misses. It is only a hint: the memory works the same when the kernel
// declines (THP off) or the call fails, whose error is ignored.
func adviseHuge(p unsafe.Pointer, size uintptr) {
	start, n := hugeRange(uintptr(p), size)
	if n == 0 {
		return
	}
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), n), syscall.MADV_HUGEPAGE)
}
