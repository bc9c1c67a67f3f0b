//go:build race

package identity_test

// The race detector slows the clustering about tenfold: under it the
// tuning sweep is skipped and the held-out suite runs fewer seeds of its
// larger shapes (see TestHeldOutSeeds).
const raceEnabled = true
