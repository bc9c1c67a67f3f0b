//go:build !race

package vector_test

const (
	raceEnabled = false
	testEfc     = 0 // the default
)
