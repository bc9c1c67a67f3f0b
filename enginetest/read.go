package enginetest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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
	second, got2 := exportJSONL(t, dst, scA)
	// Data records are identical; audit entries are marked as imported, by
	// the importing actor; the import itself adds one entry of the server's.
	if len(got2) != len(recs)+1 {
		t.Fatalf("round trip: %d records, want %d:\nfirst:\n%s\nsecond:\n%s", len(got2), len(recs)+1, first, second)
	}
	for i, r := range recs {
		g := got2[i]
		if r.Type == engram.RecordAudit {
			a, b := *r.Audit, *g.Audit
			if b.ID != a.ID || b.Op != engine.ImportedOp+a.Op || b.Actor != "test" || !strings.Contains(b.Detail, `naming actor "`+a.Actor+`"`) || !reflect.DeepEqual(b.IDs, a.IDs) {
				t.Errorf("imported audit entry = %+v, want %+v marked as imported", b, a)
			}
			continue
		}
		if x, y := mustJSON(t, r), mustJSON(t, g); x != y {
			t.Errorf("round trip is not lossless:\n%s\n%s", x, y)
		}
	}
	if last := got2[len(recs)]; last.Type != engram.RecordAudit || last.Audit.Op != "import" || last.Audit.Actor != "test" || !strings.Contains(last.Audit.Detail, "imported 2 episodes, 4 memories, 6 versions") {
		t.Errorf("the server's import entry = %+v", last.Audit)
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
	testImportAfterReads(t, open)
}

// testImportAfterReads: an export imported again into its own store after
// the memories were read (searched, got) is skipped whole, not a conflict:
// access counts are not content. A changed value still conflicts.
func testImportAfterReads(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{AccessFlush: time.Hour})
	mustAddEpisodes(t, e, nsA, "The spare key is under the blue flower pot.")
	b, _ := exportJSONL(t, e, scA)
	recs := decodeJSONL(t, b)
	ids := searchIDs(t, e, scA, "spare key")
	if len(ids) == 0 {
		t.Fatal("the search found nothing")
	}
	if _, err := e.GetMemory(ctx, scA, ids[0]); err != nil {
		t.Fatal(err)
	}
	if err := e.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := e.Import(ctx, scA, recs)
	if err != nil || res.Skipped != len(recs) {
		t.Fatalf("import after reads = %+v, %v; want all %d records skipped", res, err, len(recs))
	}
	for i := range recs {
		if recs[i].Memory != nil {
			recs[i].Memory.Value += " Changed."
			break
		}
	}
	if _, err := e.Import(ctx, scA, recs); code(err) != engram.ECONFLICT {
		t.Errorf("import of a changed memory = %v, want conflict", err)
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
		_, e1 = e.DeleteEpisode(ctx, s, epID)
		_, e2 = e.DeleteEpisode(ctx, s, unknown)
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
	testAccessTimes(t, open)
}

// testAccessTimes: one flush writes every read of a tenant; each memory
// read counts as often as it was read, and last_accessed is never earlier
// than a memory's own last read nor later than the tenant's latest read.
func testAccessTimes(t *testing.T, open Open) {
	clk := &clock{t: t0}
	e := newEngine(t, open, engine.Options{Now: clk.now, AccessFlush: time.Hour})
	ms := mustAdd(t, e, nsA, engram.Memory{Value: "First of two."}, engram.Memory{Value: "Second of two."})
	read := func(id string) {
		t.Helper()
		if _, err := e.GetMemory(ctx, scA, id); err != nil {
			t.Fatal(err)
		}
	}
	read(ms[0].ID)
	clk.add(time.Minute)
	read(ms[1].ID)
	read(ms[1].ID)
	clk.add(time.Minute)
	read(ms[0].ID)
	if err := e.FlushAccess(ctx); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{2, 2} {
		got, err := e.GetMemory(ctx, scA, ms[i].ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.AccessCount != want || got.LastAccessed == nil {
			t.Errorf("memory %d: access count %d, last %v; want %d reads", i, got.AccessCount, got.LastAccessed, want)
			continue
		}
		if last := got.LastAccessed.UTC(); !last.Equal(t0.Add(2 * time.Minute)) {
			t.Errorf("memory %d: last accessed %v, want the flush's latest read %v", i, last, t0.Add(2*time.Minute))
		}
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

// testImportForeignVersions: a version of a memory the import does not
// hold is refused, so no one can append history to (and so freeze) another
// user's memory.
func testImportForeignVersions(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	bobs := mustAddMemory(t, e, nsB, "Bob's memory.")
	_, own := exportJSONL(t, e, scB)
	mine := mustAddMemory(t, e, nsA, "Alice's memory.")
	_, recs := exportJSONL(t, e, scA)
	var foreign engram.Version
	for _, r := range own {
		if r.Type == engram.RecordVersion {
			foreign = *r.Version
		}
	}
	foreign.Namespace, foreign.Version = nsA, 2
	foreign.Op = engram.OpUpdate
	forged := []engram.Record{{Type: engram.RecordVersion, Version: &foreign}}
	for _, in := range [][]engram.Record{forged, append(recs, forged...)} {
		_, err := e.Import(ctx, scA, in)
		want := "version of memory " + bobs.ID + " which this import does not hold"
		if code(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), want) {
			t.Fatalf("import of a version of bob's memory: %v, want invalid with %q", err, want)
		}
	}
	// A version of her own memory in another namespace is refused too.
	other := *recs[1].Version
	other.Namespace.Session = "s2"
	if _, err := e.Import(ctx, scA, []engram.Record{recs[0], {Type: engram.RecordVersion, Version: &other}}); code(err) != engram.EINVALID {
		t.Fatalf("import of a version in another namespace than its memory: %v", err)
	}
	v := "Bob's memory, updated."
	if _, err := e.UpdateMemory(ctx, scB, bobs.ID, engram.MemoryPatch{Value: &v}); err != nil {
		t.Fatalf("bob's update after the refused import: %v", err)
	}
	if err := e.DeleteMemory(ctx, scB, bobs.ID, engram.DeleteOptions{}); err != nil {
		t.Fatalf("bob's delete after the refused import: %v", err)
	}
	if vs, err := e.History(ctx, scB, bobs.ID); err != nil || len(vs) != 3 {
		t.Errorf("bob's history = %d versions, %v; want 3", len(vs), err)
	}
	if _, err := e.GetMemory(ctx, scA, mine.ID); err != nil {
		t.Fatal(err)
	}
}

// testImportForeignIDs: an import whose ids are taken in another user's
// scope answers exactly as if they were free and leaves bob's records
// alone. Episode, memory and audit ids are unique per user, so alice's
// episode, memory and audit entry keep their ids and nothing is renamed.
// (Her memory was renamed, which told her the id was in use.)
func testImportForeignIDs(t *testing.T, open Open) {
	src := newEngine(t, open, engine.Options{})
	mine := mustAddEpisodes(t, src, nsA, "Alice drinks tea in Lisbon.")
	b, _ := exportJSONL(t, src, scA)
	ap, err := src.Audit(ctx, scA, engram.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}

	e := newEngine(t, open, engine.Options{})
	theirs := mustAddEpisodes(t, e, nsB, "Bob drinks coffee in Porto.")
	bp, err := e.Audit(ctx, scB, engram.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	bobBefore, _ := exportJSONL(t, e, scB)
	// alice's export with her ids swapped for bob's.
	swapped := strings.NewReplacer(
		mine.Episodes[0].ID, theirs.Episodes[0].ID,
		mine.Memories[0].ID, theirs.Memories[0].ID,
		ap.Entries[0].ID, bp.Entries[0].ID,
	).Replace(string(b))
	if swapped == string(b) {
		t.Fatal("nothing swapped; the test would prove nothing")
	}

	free, err := newEngine(t, open, engine.Options{}).Import(ctx, scA, decodeJSONL(t, b))
	if err != nil {
		t.Fatalf("import of free ids: %v", err)
	}
	taken, err := e.Import(ctx, scA, decodeJSONL(t, []byte(swapped)))
	if err != nil {
		t.Fatalf("import of ids taken in bob's scope: %v", err)
	}
	counts := func(r *engram.ImportResult) [5]int {
		return [5]int{r.Episodes, r.Memories, r.Versions, r.Audit, r.Skipped}
	}
	if counts(taken) != counts(free) || free.Renamed == nil || len(free.Renamed) != 0 || taken.Renamed == nil || len(taken.Renamed) != 0 {
		t.Errorf("import of taken ids = %+v, of free ids = %+v; want the same counts, nothing renamed", taken, free)
	}
	if bobAfter, _ := exportJSONL(t, e, scB); !bytes.Equal(bobAfter, bobBefore) {
		t.Errorf("bob's records changed:\nbefore:\n%s\nafter:\n%s", bobBefore, bobAfter)
	}
	epID, memID := theirs.Episodes[0].ID, theirs.Memories[0].ID
	for _, c := range []struct {
		s    engram.Scope
		want string
	}{{scA, mine.Episodes[0].Content}, {scB, theirs.Episodes[0].Content}} {
		if ep, err := e.GetEpisode(ctx, c.s, epID); err != nil || ep.Content != c.want {
			t.Errorf("episode %s in %+v = %+v, %v; want %q", epID, c.s, ep, err, c.want)
		}
	}
	if p, err := e.Audit(ctx, scA, engram.AuditFilter{}); err != nil || !slices.ContainsFunc(p.Entries, func(a engram.AuditEntry) bool { return a.ID == bp.Entries[0].ID }) {
		t.Errorf("alice's audit = %+v, %v; want the imported entry under its id %s", p, err, bp.Entries[0].ID)
	}
	m, err := e.GetMemory(ctx, scA, memID)
	if err != nil {
		t.Fatalf("alice's memory under bob's memory id: %v", err)
	}
	if len(m.Sources) != 1 || m.Sources[0] != epID || m.Value != mine.Memories[0].Value {
		t.Errorf("alice's memory = %+v, want its source %s", m, epID)
	}
	if vs, err := e.History(ctx, scA, memID); err != nil || len(vs) == 0 || vs[0].MemoryID != memID || vs[0].New.ID != memID || vs[0].Namespace.User != nsA.User {
		t.Errorf("history of alice's memory = %+v, %v", vs, err)
	}
	if bm, err := e.GetMemory(ctx, scB, memID); err != nil || bm.Value != theirs.Memories[0].Value {
		t.Errorf("bob's memory = %+v, %v; want his own", bm, err)
	}
	if ids := searchIDs(t, e, scA, "tea"); len(ids) != 1 || ids[0] != memID {
		t.Errorf("search in alice = %v, want %s", ids, memID)
	}
	// Importing the same again finds it all under the same fresh ids and
	// skips it, as for free ids.
	recs := decodeJSONL(t, []byte(swapped))
	again, err := e.Import(ctx, scA, recs)
	if err != nil {
		t.Fatal(err)
	}
	if again.Skipped != len(recs) || !reflect.DeepEqual(again.Renamed, taken.Renamed) {
		t.Errorf("re-import = %+v, want all %d skipped under the same ids as %v", again, len(recs), taken.Renamed)
	}
}
