package enginetest

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// exportJSONL returns the scope's export as JSON lines.
func exportJSONL(t *testing.T, e *engine.Engine, s engram.Scope) ([]byte, []engram.Record) {
	t.Helper()
	var buf bytes.Buffer
	var recs []engram.Record
	enc := json.NewEncoder(&buf)
	err := e.Export(ctx, s, func(r engram.Record) error {
		recs = append(recs, r)
		return enc.Encode(r)
	})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	return buf.Bytes(), recs
}

func decodeJSONL(t *testing.T, b []byte) []engram.Record {
	t.Helper()
	var out []engram.Record
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	for d.More() {
		var r engram.Record
		if err := d.Decode(&r); err != nil {
			t.Fatalf("decode: %v", err)
		}
		out = append(out, r)
	}
	return out
}

func testExportImport(t *testing.T, open Open) {
	src := newEngine(t, open, engine.Options{})
	mustAddEpisodes(t, src, nsA, "Caroline went to the LGBTQ support group.", "Melanie painted a sunrise.")
	m := mustAddMemory(t, src, nsA, "Alice's number is 12345678901234567.")
	if _, err := src.UpdateMemory(ctx, scA, m.ID, engram.MemoryPatch{Metadata: map[string]any{"big": json.Number("12345678901234567"), "nested": map[string]any{"a": []any{"x", true}}}}); err != nil {
		t.Fatal(err)
	}
	d := mustAddMemory(t, src, nsA, "to be deleted")
	if err := src.DeleteMemory(ctx, scA, d.ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	mustAddEpisodes(t, src, nsB, "bob's secret")

	first, recs := exportJSONL(t, src, scA)
	types := map[string]int{}
	for _, r := range recs {
		types[r.Type]++
		if n, _ := r.Namespace(); n.User != "alice" {
			t.Fatalf("export of alice has a record of %q", n.User)
		}
	}
	if types["episode"] != 2 || types["memory"] != 4 || types["version"] != 6 || types["audit"] == 0 {
		t.Fatalf("export record counts = %v", types)
	}

	dst := newEngine(t, open, engine.Options{})
	res, err := dst.Import(ctx, scA, decodeJSONL(t, first))
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if res.Episodes != 2 || res.Memories != 4 || res.Versions != 6 || res.Skipped != 0 {
		t.Errorf("import result = %+v", res)
	}
	second, _ := exportJSONL(t, dst, scA)
	// The import itself adds one audit entry; everything before it is identical.
	if !bytes.HasPrefix(second, first) {
		t.Fatalf("round trip is not lossless:\nfirst:\n%s\nsecond:\n%s", first, second)
	}
	if extra := bytes.Count(second[len(first):], []byte("\n")); extra != 1 {
		t.Errorf("round trip added %d lines, want 1 (the import audit entry)", extra)
	}
	// Importing again skips everything.
	res, err = dst.Import(ctx, scA, decodeJSONL(t, first))
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped != len(recs) || res.Episodes+res.Memories+res.Versions+res.Audit != 0 {
		t.Errorf("re-import = %+v, want all %d skipped", res, len(recs))
	}
	got, err := dst.GetMemory(ctx, scA, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(got.Metadata["big"]); string(b) != "12345678901234567" {
		t.Errorf("big number after round trip = %s", b)
	}
	if ids := searchIDs(t, dst, scA, "sunrise"); len(ids) != 1 {
		t.Errorf("imported memories not searchable: %v", ids)
	}
	// Records outside the import scope are refused, and nothing lands.
	bobs, _ := exportJSONL(t, src, scB)
	fresh := newEngine(t, open, engine.Options{})
	_, err = fresh.Import(ctx, scA, append(decodeJSONL(t, first), decodeJSONL(t, bobs)...))
	if code(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), "outside the import scope") {
		t.Fatalf("import with foreign records: %v", err)
	}
	if n := countEpisodes(t, fresh, scA); n != 0 {
		t.Errorf("failed import stored %d episodes", n)
	}
}

func testImportConflict(t *testing.T, open Open) {
	src := newEngine(t, open, engine.Options{})
	mustAddEpisodes(t, src, nsA, "one", "two")
	b, _ := exportJSONL(t, src, scA)
	recs := decodeJSONL(t, b)
	dst := newEngine(t, open, engine.Options{})
	if _, err := dst.Import(ctx, scA, recs[:1]); err != nil {
		t.Fatal(err)
	}
	recs[0].Episode.Content = "changed"
	_, err := dst.Import(ctx, scA, recs)
	if code(err) != engram.ECONFLICT {
		t.Fatalf("conflicting import: %v, want conflict", err)
	}
	if n := countEpisodes(t, dst, scA); n != 1 {
		t.Errorf("episodes after conflicting import = %d, want 1", n)
	}
	if n := countMemories(t, dst, scA); n != 0 {
		t.Errorf("memories after conflicting import = %d, want 0", n)
	}
}

var idRe = regexp.MustCompile(`[0-9A-HJKMNP-TV-Z]{26}`)

// testIsolation checks every Service method with another tenant's ids.
func testIsolation(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	res := mustAddEpisodes(t, e, nsA, "Alice's private diary entry about Zanzibar.")
	epID, memID := res.Episodes[0].ID, res.Memories[0].ID
	unknown := engram.NewID()
	others := []engram.Scope{
		scB,
		{Org: "acme", Project: "p"}, // no user
		{Org: "acme", Project: "p", IncludeShared: true},          // shared only
		{Org: "other", Project: "p", User: "alice"},               // same user name, other org
		{Org: "acme", Project: "q", User: "alice"},                // other project
		{Org: "acme", Project: "p", User: "alice", Session: "s9"}, // other session
		{Org: "acme", Project: "p", User: "alice", Agent: "a9"},   // other agent
	}
	for _, s := range others {
		same := func(what string, errA, errU error) {
			t.Helper()
			if code(errA) != engram.ENOTFOUND {
				t.Errorf("scope %+v %s: err = %v, want not found", s, what, errA)
			}
			if a, u := idRe.ReplaceAllString(engram.ErrorMessage(errA), "ID"), idRe.ReplaceAllString(engram.ErrorMessage(errU), "ID"); a != u {
				t.Errorf("scope %+v %s: message %q differs from an unknown id's %q", s, what, a, u)
			}
		}
		_, e1 := e.GetMemory(ctx, s, memID)
		_, e2 := e.GetMemory(ctx, s, unknown)
		same("get memory", e1, e2)
		_, e1 = e.GetEpisode(ctx, s, epID)
		_, e2 = e.GetEpisode(ctx, s, unknown)
		same("get episode", e1, e2)
		_, e1 = e.History(ctx, s, memID)
		_, e2 = e.History(ctx, s, unknown)
		same("history", e1, e2)
		_, e1 = e.UpdateMemory(ctx, s, memID, engram.MemoryPatch{Value: ptr("pwned")})
		_, e2 = e.UpdateMemory(ctx, s, unknown, engram.MemoryPatch{Value: ptr("pwned")})
		same("update", e1, e2)
		_, e1 = e.SupersedeMemory(ctx, s, memID, engram.SupersedeRequest{New: engram.Memory{Value: "pwned"}})
		_, e2 = e.SupersedeMemory(ctx, s, unknown, engram.SupersedeRequest{New: engram.Memory{Value: "pwned"}})
		same("supersede", e1, e2)
		e1 = e.DeleteMemory(ctx, s, memID, engram.DeleteOptions{})
		e2 = e.DeleteMemory(ctx, s, unknown, engram.DeleteOptions{})
		same("soft delete", e1, e2)
		e1 = e.DeleteMemory(ctx, s, memID, engram.DeleteOptions{Hard: true})
		e2 = e.DeleteMemory(ctx, s, unknown, engram.DeleteOptions{Hard: true})
		same("hard delete", e1, e2)
		_, e1 = e.RestoreMemory(ctx, s, memID, "")
		_, e2 = e.RestoreMemory(ctx, s, unknown, "")
		same("restore", e1, e2)
		_, e1 = e.Rollback(ctx, s, memID, 1, "")
		_, e2 = e.Rollback(ctx, s, unknown, 1, "")
		same("rollback", e1, e2)
		e1 = e.DeleteEpisode(ctx, s, epID)
		e2 = e.DeleteEpisode(ctx, s, unknown)
		same("delete episode", e1, e2)

		if ids := searchIDs(t, e, s, "Zanzibar diary"); len(ids) != 0 {
			t.Errorf("scope %+v: search leaks %v", s, ids)
		}
		if n := countMemories(t, e, s, engram.StatusActive, engram.StatusDeleted); n != 0 {
			t.Errorf("scope %+v: list memories leaks %d", s, n)
		}
		if n := countEpisodes(t, e, s); n != 0 {
			t.Errorf("scope %+v: list episodes leaks %d", s, n)
		}
		b, _ := exportJSONL(t, e, s)
		if bytes.Contains(b, []byte("Zanzibar")) || bytes.Contains(b, []byte(memID)) {
			t.Errorf("scope %+v: export leaks", s)
		}
		a, err := e.Audit(ctx, s, engram.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range a.Entries {
			for _, id := range en.IDs {
				if id == memID || id == epID {
					t.Errorf("scope %+v: audit leaks %s", s, id)
				}
			}
		}
		if s.User != "" || s.Agent != "" || s.Session != "" {
			if c, err := e.DeleteScope(ctx, s); err != nil || c.Episodes+c.Memories != 0 {
				t.Errorf("scope %+v: delete scope touched alice's data: %+v %v", s, c, err)
			}
		}
	}
	// Alice's data is untouched by all of the above.
	m, err := e.GetMemory(ctx, scA, memID)
	if err != nil || m.Version != 1 || m.Status != engram.StatusActive {
		t.Fatalf("alice's memory changed: %+v %v", m, err)
	}
	if _, err := e.GetEpisode(ctx, scA, epID); err != nil {
		t.Fatalf("alice's episode gone: %v", err)
	}
	// A memory shared at project level is visible to a user only with IncludeShared.
	shared := mustAddMemory(t, e, engram.Namespace{Org: "acme", Project: "p"}, "The office closes at 6pm on Fridays.")
	if ids := searchIDs(t, e, scB, "office closes"); len(ids) != 0 {
		t.Errorf("shared memory visible without include_shared")
	}
	withShared := scB
	withShared.IncludeShared = true
	if ids := searchIDs(t, e, withShared, "office closes"); len(ids) != 1 || ids[0] != shared.ID {
		t.Errorf("shared memory with include_shared = %v", ids)
	}
	if _, err := e.UpdateMemory(ctx, withShared, shared.ID, engram.MemoryPatch{Value: ptr("pwned")}); code(err) != engram.ENOTFOUND {
		t.Errorf("a user updated a project-shared memory: %v", err)
	}
}

func testAccessCount(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	m := mustAddMemory(t, e, nsA, "Access me twice.")
	for i := 0; i < 2; i++ {
		if _, err := e.GetMemory(ctx, scA, m.ID); err != nil {
			t.Fatal(err)
		}
	}
	searchIDs(t, e, scA, "access")
	if err := e.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := e.GetMemory(ctx, scA, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.AccessCount < 1 || got.LastAccessed == nil {
		t.Errorf("access count = %d, last = %v", got.AccessCount, got.LastAccessed)
	}
	if got.Version != 1 {
		t.Errorf("reads changed the version to %d", got.Version)
	}
}

func testSearchInput(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	mustAddMemory(t, e, nsA, "Alpha beta gamma.")
	for _, tc := range []struct {
		req  engram.SearchRequest
		code string
	}{
		{engram.SearchRequest{Scope: scA, Query: "  "}, engram.EINVALID},
		{engram.SearchRequest{Scope: scA, Query: "x", K: -1}, engram.EINVALID},
		{engram.SearchRequest{Scope: scA, Query: "x", K: engram.MaxK + 1}, engram.EINVALID},
		{engram.SearchRequest{Scope: engram.Scope{Org: "acme"}, Query: "x"}, engram.EINVALID},
		{engram.SearchRequest{Scope: scA, Query: "x", Filter: engram.MemoryFilter{Kinds: []engram.Kind{"dream"}}}, engram.EINVALID},
	} {
		if _, err := e.Search(ctx, tc.req); code(err) != tc.code {
			t.Errorf("search %+v: %v, want %s", tc.req, err, tc.code)
		}
	}
	res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "gamma", Explain: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || len(res.Hits[0].Explain) == 0 || res.Hits[0].Explain[0].Rank != 1 {
		t.Errorf("explain missing: %+v", res.Hits)
	}
}
