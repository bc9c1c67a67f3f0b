// Package shareddata finds the shared folder of data sets and model
// references that tests and benchmarks read but the repository does not
// hold.
package shareddata

import (
	"os"
	"path/filepath"
)

// Root returns the shared folder: $ENGRAM_SHARED, else ../shared next to
// the repository root found from the working directory (the folder holding
// go.mod). It returns "" when neither can be worked out; callers skip or
// fail with a sentence when the files they need are missing.
func Root() string {
	if d := os.Getenv("ENGRAM_SHARED"); d != "" {
		return d
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "..", "shared")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Dir returns the data sets folder, Root()/datasets, or "" as Root does.
func Dir() string {
	if r := Root(); r != "" {
		return filepath.Join(r, "datasets")
	}
	return ""
}
