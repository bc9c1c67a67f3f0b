//go:build race

package vector_test

// The race detector slows the graph build about tenfold, so under it the
// recall tests use fewer vectors and a narrower construction search; the
// full-size runs without -race test the defaults.
const (
	raceEnabled = true
	testEfc     = 48
)
