package uselite

import "golang.org/x/sys/cpu"

//go:noescape
func kern6x16AVX2(k int, a, b, c *float32, lda, ldc int)

//go:noescape
func kern6x32AVX512(k int, a, b, c *float32, lda, ldc int)

// The AVX-512 kernel does twice the work per instruction of the AVX2 one;
// on this project's machines (full-width 512-bit units) it runs about 1.5x
// faster.
func init() {
	switch {
	case cpu.X86.HasAVX512F:
		kernel, nr = kern6x32AVX512, 32
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		kernel, nr = kern6x16AVX2, 16
	}
}

// kernels lists every kernel this CPU can run, for tests that compare them.
func kernels() map[string]kernelImpl {
	k := map[string]kernelImpl{"go": {kern6x16Go, 16}}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		k["avx2"] = kernelImpl{kern6x16AVX2, 16}
	}
	if cpu.X86.HasAVX512F {
		k["avx512"] = kernelImpl{kern6x32AVX512, 32}
	}
	return k
}
