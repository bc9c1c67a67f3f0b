package enginetest

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// exportBlob is binary content of three stored chunks, the last short.
func exportBlob() []byte {
	b := make([]byte, 2*engram.ResourceChunkBytes+4321)
	for i := range b {
		b[i] = byte(i*31 + i>>11)
	}
	return b
}

// retarget returns recs with every namespace passed through f.
func retarget(t *testing.T, data []byte, f func(engram.Namespace) engram.Namespace) []engram.Record {
	t.Helper()
	recs := decodeJSONL(t, data)
	for _, r := range recs {
		switch {
		case r.Episode != nil:
			r.Episode.Namespace = f(r.Episode.Namespace)
		case r.Memory != nil:
			r.Memory.Namespace = f(r.Memory.Namespace)
		case r.Version != nil:
			r.Version.Namespace = f(r.Version.Namespace)
			for _, m := range []*engram.Memory{r.Version.Old, r.Version.New} {
				if m != nil {
					m.Namespace = f(m.Namespace)
				}
			}
		case r.Audit != nil:
			r.Audit.Namespace = f(r.Audit.Namespace)
		case r.Resource != nil:
			r.Resource.Namespace = f(r.Resource.Namespace)
		case r.Chunk != nil:
			r.Chunk.Namespace = f(r.Chunk.Namespace)
		case r.Modality != nil:
			r.Modality.Namespace = f(r.Modality.Namespace)
		case r.Person != nil:
			r.Person.Namespace = f(r.Person.Namespace)
		case r.Identity != nil:
			r.Identity.Namespace = f(r.Identity.Namespace)
		case r.Observation != nil:
			r.Observation.Namespace = f(r.Observation.Namespace)
		case r.IdentityEvent != nil:
			r.IdentityEvent.Namespace = f(r.IdentityEvent.Namespace)
		}
	}
	return recs
}

func listAllResources(t *testing.T, e *engine.Engine, s engram.Scope) []engram.Resource {
	t.Helper()
	p, err := e.ListResources(ctx, s, engram.ResourceFilter{Limit: engram.MaxLimit})
	if err != nil {
		t.Fatalf("list resources: %v", err)
	}
	return p.Resources
}

// testExportImportResources: an export carries every resource of the scope
// with its content in chunk records (a document in German and Chinese,
// and a binary file of three chunks); importing it into an empty store and
// exporting again gives the same records (audit entries marked as
// imported); the imported memories still cite their resource, and the
// binary downloads byte-identical.
func testExportImportResources(t *testing.T, open Open) {
	ns := engram.Namespace{Org: "exportres", Project: "p", User: "alice"}
	sc := engram.ScopeOf(ns)
	src := newEngine(t, open, engine.Options{})
	mustAddEpisodes(t, src, ns, "Der Leuchtturm steht am Hafen.", "灯塔在港口。")
	doc := addResource(t, src, ns, "handbuch.md", "text/markdown", []byte(handbook))
	blob := exportBlob()
	bin := addResource(t, src, ns, "blob.bin", "application/octet-stream", blob)

	first, recs := exportJSONL(t, src, sc)
	chunks := map[string]int{}
	resources := 0
	for _, r := range recs {
		switch r.Type {
		case engram.RecordResource:
			resources++
		case engram.RecordResourceChunk:
			chunks[r.Chunk.ResourceID]++
		}
	}
	if resources != 2 || chunks[bin.ID] != 3 || chunks[doc.ID] != 1 {
		t.Fatalf("export holds %d resources and chunks %v, want 2 and 3 chunks of %s, 1 of %s", resources, chunks, bin.ID, doc.ID)
	}

	dst := newEngine(t, open, engine.Options{})
	res, err := dst.Import(ctx, sc, decodeJSONL(t, first))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if res.Resources != 2 || res.Skipped != 0 {
		t.Errorf("import result = %+v, want 2 resources stored", res)
	}
	second, got := exportJSONL(t, dst, sc)
	compareRoundTrip(t, recs, got, first, second)
	if b := download(t, dst, sc, bin.ID); !bytes.Equal(b, blob) {
		t.Errorf("the imported binary downloads %d bytes, not the %d exported", len(b), len(blob))
	}
	res, err = dst.Import(ctx, sc, decodeJSONL(t, first))
	if err != nil {
		t.Fatal(err)
	}
	if res.Resources != 0 || res.Memories != 0 {
		t.Errorf("re-import = %+v, want everything skipped", res)
	}
	hit := mediaHit(t, dst, sc, "bm25", "齿轮上油")
	if hit.Metadata[engram.MetaResourceID] != doc.ID {
		t.Errorf("imported memory cites %v, want %s", hit.Metadata[engram.MetaResourceID], doc.ID)
	}
}

// compareRoundTrip checks that the second export equals the first but for
// audit entries, which an import marks as imported, and the import's own
// entry.
func compareRoundTrip(t *testing.T, recs, got []engram.Record, first, second []byte) {
	t.Helper()
	var a, b []engram.Record
	for _, r := range recs {
		if r.Type != engram.RecordAudit {
			a = append(a, r)
		}
	}
	for _, r := range got {
		if r.Type != engram.RecordAudit {
			b = append(b, r)
		}
	}
	if len(a) != len(b) {
		t.Fatalf("round trip: %d records but audit, want %d:\nfirst:\n%.4000s\nsecond:\n%.4000s", len(b), len(a), first, second)
	}
	for i := range a {
		if x, y := mustJSON(t, a[i]), mustJSON(t, b[i]); x != y {
			t.Errorf("round trip is not lossless at record %d:\n%.2000s\n%.2000s", i+1, x, y)
		}
	}
}

// testImportResourcesElsewhere: an export imported into another tenant,
// and into another user of the same tenant (whose ids are taken, so the
// resources get fresh ids that the memories and the second export cite),
// lands there only: the source's resources are unchanged.
func testImportResourcesElsewhere(t *testing.T, open Open) {
	ns := engram.Namespace{Org: "exportelse", Project: "p", User: "alice"}
	sc := engram.ScopeOf(ns)
	e := newEngine(t, open, engine.Options{})
	doc := addResource(t, e, ns, "handbuch.md", "text/markdown", []byte(handbook))
	blob := exportBlob()
	bin := addResource(t, e, ns, "blob.bin", "application/octet-stream", blob)
	data, _ := exportJSONL(t, e, sc)
	before := mustJSON(t, listAllResources(t, e, sc))

	for _, c := range []struct {
		name string
		to   engram.Namespace
	}{
		{"another tenant", engram.Namespace{Org: "exportelse2", Project: "p", User: "alice"}},
		{"another user", engram.Namespace{Org: "exportelse", Project: "p", User: "bob"}},
	} {
		to := engram.ScopeOf(c.to)
		recs := retarget(t, data, func(engram.Namespace) engram.Namespace { return c.to })
		res, err := e.Import(ctx, to, recs)
		if err != nil {
			t.Fatalf("%s: import: %v", c.name, err)
		}
		if res.Resources != 2 {
			t.Errorf("%s: import = %+v, want 2 resources", c.name, res)
		}
		if after := mustJSON(t, listAllResources(t, e, sc)); after != before {
			t.Errorf("%s: the source's resources changed:\n%s\n%s", c.name, before, after)
		}
		got := listAllResources(t, e, to)
		if len(got) != 2 {
			t.Fatalf("%s: %d resources, want 2", c.name, len(got))
		}
		binID := bin.ID
		if n, ok := res.Renamed[bin.ID]; ok {
			binID = n
		}
		if b := download(t, e, to, binID); !bytes.Equal(b, blob) {
			t.Errorf("%s: imported binary differs (%d bytes)", c.name, len(b))
		}
		docID := doc.ID
		if n, ok := res.Renamed[doc.ID]; ok {
			docID = n
		}
		if c.to.User == "bob" && (docID == doc.ID || binID == bin.ID) {
			t.Errorf("%s: resource ids taken by alice were not renamed: %v", c.name, res.Renamed)
		}
		hit := mediaHit(t, e, to, "bm25", "齿轮上油")
		if hit.Namespace != c.to || hit.Metadata[engram.MetaResourceID] != docID {
			t.Errorf("%s: imported memory %+v cites %v, want %s", c.name, hit.Namespace, hit.Metadata[engram.MetaResourceID], docID)
		}
		if cit, _ := hit.Metadata[engram.MetaResource].(map[string]any); cit["resource_id"] != docID {
			t.Errorf("%s: imported citation = %v, want resource_id %s", c.name, cit, docID)
		}
	}
}

// testImportTamperedChunk: an import whose resource chunk was altered, or
// lacks a chunk, or has a chunk without its resource, is refused naming
// the record, and stores nothing.
func testImportTamperedChunk(t *testing.T, open Open) {
	ns := engram.Namespace{Org: "exporttamper", Project: "p", User: "alice"}
	sc := engram.ScopeOf(ns)
	src := newEngine(t, open, engine.Options{})
	mustAddEpisodes(t, src, ns, "Die Fähre fährt um acht.")
	bin := addResource(t, src, ns, "blob.bin", "application/octet-stream", exportBlob())
	data, recs := exportJSONL(t, src, sc)
	resAt, chunkAt := -1, -1
	for i, r := range recs {
		if r.Type == engram.RecordResource && r.Resource.ID == bin.ID {
			resAt = i
		}
		if r.Type == engram.RecordResourceChunk && r.Chunk.Seq == 1 {
			chunkAt = i
		}
	}
	if resAt < 0 || chunkAt != resAt+2 {
		t.Fatalf("export order: resource at %d, its chunk 1 at %d", resAt, chunkAt)
	}
	dst := newEngine(t, open, engine.Options{})
	for _, c := range []struct {
		name   string
		change func([]engram.Record) []engram.Record
		want   string
	}{
		{"altered byte", func(rs []engram.Record) []engram.Record {
			rs[chunkAt].Chunk.Data[777] ^= 0x40
			return rs
		}, "a chunk is missing or altered"},
		{"missing chunk", func(rs []engram.Record) []engram.Record {
			return append(rs[:chunkAt:chunkAt], rs[chunkAt+1:]...)
		}, "comes where chunk 1 belongs"},
		{"chunk without resource", func(rs []engram.Record) []engram.Record {
			return append(rs[:resAt:resAt], rs[resAt+1:]...)
		}, "does not follow that resource's record"},
	} {
		_, err := dst.Import(ctx, sc, c.change(decodeJSONL(t, data)))
		msg := engram.ErrorMessage(err)
		if code(err) != engram.EINVALID || !strings.Contains(msg, c.want) || !strings.Contains(msg, "record ") {
			t.Errorf("%s: import = %v, want EINVALID naming the record and %q", c.name, err, c.want)
		}
		if n, rs := countEpisodes(t, dst, sc), listAllResources(t, dst, sc); n != 0 || len(rs) != 0 {
			t.Errorf("%s: the refused import stored %d episodes and %d resources", c.name, n, len(rs))
		}
	}
	// The altered byte is named by the resource's record and its chunks.
	rs := decodeJSONL(t, data)
	rs[chunkAt].Chunk.Data[0] ^= 1
	_, err := dst.Import(ctx, sc, rs)
	if want := "record " + strconv.Itoa(resAt+1) + ": resource " + bin.ID; !strings.Contains(engram.ErrorMessage(err), want) {
		t.Errorf("tampered import = %v, want it to name %q", err, want)
	}
}
