//go:build !race

package identity_test

const raceEnabled = false
