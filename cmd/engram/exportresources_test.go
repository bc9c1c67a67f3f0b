package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestExportImportResources: engram export carries a binary resource of
// three chunks and a German document; engram import, even in chunks of a
// few hundred bytes of JSON, keeps each resource with its chunks in one
// call, and the re-export is the same but for the import's own audit
// entries.
func TestExportImportResources(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src := localCLI(t, filepath.Join(tmp, "src"))
	blob := make([]byte, 2*engram.ResourceChunkBytes+999)
	for i := range blob {
		blob[i] = byte(i*13 + i>>9)
	}
	binPath, docPath := filepath.Join(tmp, "blob.bin"), filepath.Join(tmp, "notiz.md")
	if err := os.WriteFile(binPath, blob, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(docPath, []byte("# Notiz\n\nDer Schlüssel liegt unter der Fußmatte.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src.ok("resources", "add", "--user", "ann", binPath)
	src.ok("resources", "add", "--user", "ann", docPath)
	a := src.ok("export", "--user", "ann")
	types := map[string]int{}
	for _, l := range lines(a) {
		types[decodeRecord(t, l).Type]++
	}
	if types[engram.RecordResource] != 2 || types[engram.RecordResourceChunk] != 4 {
		t.Fatalf("export record types = %v, want 2 resources and 4 chunks", types)
	}
	for _, c := range []struct{ name, chunkBytes string }{{"whole", "67108864"}, {"chunked", "600"}} {
		dst := localCLI(t, filepath.Join(tmp, c.name))
		dst.stdin = a
		var res engram.ImportResult
		dst.json(&res, "import", "--user", "ann", "--chunk-bytes", c.chunkBytes, "-")
		dst.stdin = ""
		if res.Resources != 2 {
			t.Errorf("%s: import = %+v, want 2 resources", c.name, res)
		}
		got, n := withoutImportAudit(t, dst.ok("export", "--user", "ann"))
		if got != a {
			t.Errorf("%s: the re-export differs from the export", c.name)
		}
		if c.name == "chunked" && n < 2 {
			t.Errorf("%s: %d Import calls, want several", c.name, n)
		}
		if out := dst.ok("search", "--user", "ann", "Fußmatte"); !strings.Contains(out, "Schlüssel") {
			t.Errorf("%s: the imported document's memory is not found: %s", c.name, out)
		}
	}
}
