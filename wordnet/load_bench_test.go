package wordnet_test

import (
	"testing"

	"github.com/engramhq/engram/wordnet"
)

// BenchmarkLoad reads the installed database from disk into memory.
func BenchmarkLoad(b *testing.B) {
	dir := installed(b)
	for b.Loop() {
		if err := wordnet.Open(dir).Load(); err != nil {
			b.Fatal(err)
		}
	}
}
