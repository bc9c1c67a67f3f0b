package uselite

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func kernQ6x64VNNI512(k int, a, b unsafe.Pointer, c *int32, lda, ldc int)

//go:noescape
func kernQ6x16AVXVNNI(k int, a, b unsafe.Pointer, c *int32, lda, ldc int)

//go:noescape
func kernQ6x16AVX2(k int, a, b unsafe.Pointer, c *int32, lda, ldc int)

// The int kernels in order of preference: VPDPBUSD on 512 bits, then on
// 256 (AVX-VNNI, without AVX-512), then VPMADDWD on int16 (plain AVX2).
func init() {
	if ks := qkernels(); len(ks) > 1 {
		qkernel = ks[len(ks)-1]
	}
}

// qkernels lists every int kernel this CPU can run, slowest first, for
// start-up and for tests that compare them.
func qkernels() []qkernelImpl {
	ks := []qkernelImpl{{"go", kernQGo, 16, false}}
	if cpu.X86.HasAVX2 {
		ks = append(ks, qkernelImpl{"avx2", kernQ6x16AVX2, 16, true})
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasAVXVNNI { // the kernel broadcasts with AVX2
		ks = append(ks, qkernelImpl{"avxvnni", kernQ6x16AVXVNNI, 16, false})
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VNNI {
		ks = append(ks, qkernelImpl{"avx512vnni", kernQ6x64VNNI512, 64, false})
	}
	return ks
}
