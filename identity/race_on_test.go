//go:build race

package identity_test

// The race detector slows the clustering about fivefold: under it the
// tuning sweep is skipped and the held-out suite runs on fewer seeds and
// shapes (see TestHeldOutSeeds); the full runs are without -race.
const raceEnabled = true
