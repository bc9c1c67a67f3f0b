package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestStandbyCurrent fails while cmd/engram/standby_gen.go is not what
// the generator writes from the interfaces as they are now.
func TestStandbyCurrent(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", outFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate in cmd/engram", outFile)
	}
}
