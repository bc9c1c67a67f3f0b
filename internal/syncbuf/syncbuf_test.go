package syncbuf

import (
	"strings"
	"sync"
	"testing"
)

// Concurrent writes all land, whole (go test -race checks the guard).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				b.Write([]byte("ab\n"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	s := b.String()
	if n := strings.Count(s, "ab\n"); n != 800 || len(s) != 2400 {
		t.Fatalf("%d whole lines in %d bytes, want 800 in 2400", n, len(s))
	}
}
