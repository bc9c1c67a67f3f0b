//go:build !amd64

package uselite

// qkernels lists every int kernel this CPU can run, slowest first.
func qkernels() []qkernelImpl {
	return []qkernelImpl{{"go", kernQGo, 16, false}}
}
