//go:build !amd64

package uselite

// kernels lists every kernel this CPU can run, for tests that compare them.
func kernels() map[string]kernelImpl {
	return map[string]kernelImpl{"go": {kern6x16Go, 16}}
}
