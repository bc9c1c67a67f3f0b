//go:build !unix

package uselite_test

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
