package enginetest

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testExportImportConflict: a scope holding a conflict (a CONFLICT
// version in its history) exports and imports into a fresh store, where
// the conflict is listed again; importing the export back into its own
// store skips every record.
func testExportImportConflict(t *testing.T, open Open) {
	src := newEngine(t, open, engine.Options{})
	say(t, src, t0.Add(30*24*time.Hour), "Alice", "Ich arbeite jetzt bei Siemens.")
	if res := say(t, src, t0, "Alice", "Ich arbeite bei Bosch."); res.Decisions[engram.OpConflict] != 1 {
		t.Fatalf("decisions = %v, want a CONFLICT", res.Decisions)
	}
	raw, _ := exportJSONL(t, src, scA)
	recs := decodeJSONL(t, raw)

	dst := newEngine(t, open, engine.Options{})
	if _, err := dst.Import(ctx, scA, recs); err != nil {
		t.Fatalf("import of a scope with a conflict: %v", err)
	}
	if cs, err := dst.ListConflicts(ctx, scA); err != nil || len(cs) != 1 || len(cs[0].Memories) != 2 {
		t.Errorf("conflicts after the import = %+v, %v; want the one exported", cs, err)
	}
	res, err := src.Import(ctx, scA, recs)
	if err != nil {
		t.Fatalf("import of the export into its own store: %v", err)
	}
	if res.Episodes+res.Memories+res.Versions != 0 || res.Skipped == 0 {
		t.Errorf("import into its own store = %+v, want everything skipped", res)
	}
}
