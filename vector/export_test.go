package vector

// SetParallelFloats lets the external tests force Flat's one- or
// two-goroutine scan; it returns a function restoring the default.
func SetParallelFloats(n int) (restore func()) {
	old := parallelFloats
	parallelFloats = n
	return func() { parallelFloats = old }
}
