package http_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// engineEnv is a real engine in a temp dir behind a real HTTP server.
type engineEnv struct {
	eng *engine.Engine
	srv *httptest.Server
	c   *engramhttp.Client
}

func newEngineEnv(t testing.TB, opts engramhttp.ServerOptions) *engineEnv {
	t.Helper()
	return newEngineEnvWith(t, engine.Options{}, opts)
}

// newEngineEnvWith is newEngineEnv with an engine configured by eopts; its
// logger defaults to discarding and its access counts are flushed only on
// Close.
func newEngineEnvWith(t testing.TB, eopts engine.Options, opts engramhttp.ServerOptions) *engineEnv {
	t.Helper()
	ctx := context.Background()
	// Access counts are flushed only on Close so that reads in the middle
	// of a test do not change what later reads return.
	if eopts.Logger == nil {
		eopts.Logger = discardLogger()
	}
	eopts.AccessFlush = time.Hour
	eng, err := storeopen.Engine(ctx, t.TempDir(), eopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := eng.Close(); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	opts.Ready = eng.Ready
	srv := httptest.NewServer(engramhttp.NewServer(eng, opts))
	t.Cleanup(srv.Close)
	return &engineEnv{eng: eng, srv: srv, c: engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Actor: "tester"})}
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkSame fails unless got and want encode to the same JSON.
func checkSame(t *testing.T, what string, got, want any) {
	t.Helper()
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("%s differs:\n got %s\nwant %s", what, g, w)
	}
}

// TestEngine_Endpoints exercises every endpoint through the Client against
// the real engine, checking that what comes back is what went in and what
// the engine in-process would answer.
func TestEngine_Endpoints(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	c, eng := env.c, env.eng
	ctx := context.Background()
	ns := engram.Namespace{Org: "acme", Project: "bot", User: "ann", Agent: "helper", Session: "s1"}
	sc := engram.ScopeOf(ns)

	if err := c.Health(ctx); err != nil {
		t.Fatalf("Health: %v", err)
	}
	if err := c.Ready(ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}

	// Episodes.
	at := time.Date(2024, 3, 1, 10, 0, 0, 123456000, time.UTC)
	epID := engram.NewID()
	added, err := c.AddEpisodes(ctx, engram.AddEpisodesRequest{
		Namespace: ns,
		Episodes: []engram.EpisodeInput{
			{ID: epID, Role: "user", Speaker: "Ann", Content: "I visited Lisbon in March.", Modality: engram.ModalityText,
				OccurredAt: &at, Metadata: map[string]any{"channel": "slack", "n": json.Number("2.5")}},
			{Role: "assistant", Content: "Noted, Lisbon it is."},
		},
	})
	if err != nil {
		t.Fatalf("AddEpisodes: %v", err)
	}
	if len(added.Episodes) != 2 || len(added.Memories) != 2 {
		t.Fatalf("AddEpisodes stored %d episodes and formed %d memories, want 2 and 2", len(added.Episodes), len(added.Memories))
	}
	ep := added.Episodes[0]
	if ep.ID != epID || ep.Namespace != ns || ep.Role != "user" || ep.Speaker != "Ann" || ep.Content != "I visited Lisbon in March." ||
		!ep.OccurredAt.Equal(at) || ep.Metadata["n"] != json.Number("2.5") || ep.Metadata["channel"] != "slack" {
		t.Errorf("stored episode = %+v", ep)
	}
	got, err := c.GetEpisode(ctx, sc, epID)
	if err != nil {
		t.Fatalf("GetEpisode: %v", err)
	}
	checkSame(t, "GetEpisode", got, ep)
	inproc, err := eng.GetEpisode(ctx, sc, epID)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "GetEpisode vs in-process", got, inproc)

	epPage, err := c.ListEpisodes(ctx, sc, engram.EpisodeFilter{Roles: []string{"user"}, Metadata: map[string]any{"channel": "slack"}})
	if err != nil {
		t.Fatalf("ListEpisodes: %v", err)
	}
	if len(epPage.Episodes) != 1 || epPage.Episodes[0].ID != epID {
		t.Errorf("ListEpisodes(role=user, meta.channel=slack) = %s", mustJSON(t, epPage))
	}
	epPage, err = c.ListEpisodes(ctx, sc, engram.EpisodeFilter{Limit: 1})
	if err != nil || len(epPage.Episodes) != 1 || epPage.Next == "" {
		t.Fatalf("ListEpisodes(limit 1) = %v, %v; want one episode and a cursor", epPage, err)
	}
	epPage2, err := c.ListEpisodes(ctx, sc, engram.EpisodeFilter{Limit: 1, Cursor: epPage.Next})
	if err != nil || len(epPage2.Episodes) != 1 || epPage2.Episodes[0].ID == epPage.Episodes[0].ID {
		t.Errorf("second page = %v, %v", epPage2, err)
	}

	// Memories.
	validFrom := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	mems, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{
		Kind: engram.KindCore, Abstraction: "Ann lives in Lisbon", Cues: []string{"Ann", "Lisbon"}, Value: "Ann lives in Lisbon since March 2024.",
		Language: "en", Confidence: 0.8, Importance: 0.7, ValidFrom: &validFrom, Sources: []string{epID},
		Metadata: map[string]any{"topic": "home", "rank": json.Number("2")},
	}}})
	if err != nil {
		t.Fatalf("AddMemories: %v", err)
	}
	if len(mems) != 1 {
		t.Fatalf("AddMemories returned %d memories", len(mems))
	}
	m := mems[0]
	if m.Kind != engram.KindCore || m.Value != "Ann lives in Lisbon since March 2024." || m.Confidence != 0.8 || m.Importance != 0.7 ||
		m.Language != "en" || m.ValidFrom == nil || !m.ValidFrom.Equal(validFrom) || len(m.Sources) != 1 || m.Sources[0] != epID ||
		m.Status != engram.StatusActive || m.Version != 1 || m.Namespace != ns || m.Metadata["rank"] != json.Number("2") {
		t.Errorf("added memory = %s", mustJSON(t, m))
	}
	gm, err := c.GetMemory(ctx, sc, m.ID)
	if err != nil {
		t.Fatalf("GetMemory: %v", err)
	}
	checkSame(t, "GetMemory", gm, m)

	mp, err := c.ListMemories(ctx, sc, engram.MemoryFilter{Kinds: []engram.Kind{engram.KindCore}, Metadata: map[string]any{"rank": json.Number("2")}})
	if err != nil {
		t.Fatalf("ListMemories: %v", err)
	}
	if len(mp.Memories) != 1 || mp.Memories[0].ID != m.ID {
		t.Errorf("ListMemories(kind=core, meta.rank=2) = %s", mustJSON(t, mp))
	}
	mp, err = c.ListMemories(ctx, sc, engram.MemoryFilter{MetadataIn: map[string][]any{"topic": {"work", "home"}}})
	if err != nil || len(mp.Memories) != 1 || mp.Memories[0].ID != m.ID {
		t.Errorf("ListMemories(meta_in.topic) = %v, %v", mp, err)
	}
	inprocPage, err := eng.ListMemories(ctx, sc, engram.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	mp, err = c.ListMemories(ctx, sc, engram.MemoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "ListMemories vs in-process", mp, inprocPage)
	if len(mp.Memories) != 3 {
		t.Errorf("ListMemories = %d memories, want 3 (2 formed, 1 added)", len(mp.Memories))
	}
	r := do(t, "POST", env.srv.URL+"/v1/memories/list", mustJSON(t, map[string]any{
		"scope": sc, "filter": engram.MemoryFilter{Kinds: []engram.Kind{engram.KindEpisodic}},
	}))
	var listed engram.MemoryPage
	if err := json.Unmarshal(r.Body, &listed); err != nil || r.Status != 200 || len(listed.Memories) != 2 {
		t.Errorf("POST /v1/memories/list = %d %s", r.Status, r.Body)
	}

	// Search.
	res, err := c.Search(ctx, engram.SearchRequest{Scope: sc, Query: "where does Ann live Lisbon", K: 5, Explain: true})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(res.Hits) == 0 || len(res.Hits[0].Explain) == 0 {
		t.Fatalf("Search = %s, want hits with explanations", mustJSON(t, res))
	}
	found := false
	for _, h := range res.Hits {
		found = found || h.Memory.ID == m.ID
	}
	if !found {
		t.Errorf("Search did not find %s: %s", m.ID, mustJSON(t, res))
	}

	// Update, history.
	newVal := "Ann lives in Porto."
	upd, err := c.UpdateMemory(ctx, sc, m.ID, engram.MemoryPatch{Value: &newVal, Metadata: map[string]any{"topic": "home", "rank": json.Number("3")}, Reason: "moved"})
	if err != nil {
		t.Fatalf("UpdateMemory: %v", err)
	}
	if upd.Value != newVal || upd.Version != 2 || upd.Metadata["rank"] != json.Number("3") {
		t.Errorf("updated = %s", mustJSON(t, upd))
	}
	hist, err := c.History(ctx, sc, m.ID)
	if err != nil {
		t.Fatalf("History: %v", err)
	}
	if len(hist) != 2 || hist[0].Op != engram.OpAdd || hist[1].Op != engram.OpUpdate || hist[1].Actor != "tester" || hist[1].Reason != "moved" ||
		hist[1].Old == nil || hist[1].Old.Value != m.Value || hist[1].New.Value != newVal {
		t.Errorf("History = %s", mustJSON(t, hist))
	}

	// Rollback to version 1.
	rb, err := c.Rollback(ctx, sc, m.ID, 1, "undo")
	if err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	if rb.Value != m.Value || rb.Version != 3 {
		t.Errorf("rolled back = %s", mustJSON(t, rb))
	}

	// Soft delete, restore.
	if err := c.DeleteMemory(ctx, sc, m.ID, engram.DeleteOptions{Reason: "test"}); err != nil {
		t.Fatalf("DeleteMemory: %v", err)
	}
	if gm, err := c.GetMemory(ctx, sc, m.ID); err != nil || gm.Status != engram.StatusDeleted {
		t.Errorf("after soft delete: %v, %v; want status deleted", gm, err)
	}
	rs, err := c.RestoreMemory(ctx, sc, m.ID, "back")
	if err != nil {
		t.Fatalf("RestoreMemory: %v", err)
	}
	if rs.Status != engram.StatusActive || rs.Version != 5 {
		t.Errorf("restored = %s", mustJSON(t, rs))
	}
	// A second restore conflicts, and the client reports it like the engine.
	_, err = c.RestoreMemory(ctx, sc, m.ID, "")
	_, inErr := eng.RestoreMemory(ctx, sc, m.ID, "")
	if engram.ErrorCode(err) != engram.ECONFLICT || engram.ErrorMessage(err) != engram.ErrorMessage(inErr) {
		t.Errorf("restore of an active memory: %v; in-process: %v", err, inErr)
	}

	// Supersede.
	sup, err := c.SupersedeMemory(ctx, sc, m.ID, engram.SupersedeRequest{New: engram.Memory{Value: "Ann lives in Madrid."}, At: &at, Reason: "moved again"})
	if err != nil {
		t.Fatalf("SupersedeMemory: %v", err)
	}
	if sup.Old.Status != engram.StatusSuperseded || sup.Old.SupersededBy != sup.New.ID || sup.New.Value != "Ann lives in Madrid." ||
		sup.New.Status != engram.StatusActive || sup.New.Kind != engram.KindCore {
		t.Errorf("supersede = %s", mustJSON(t, sup))
	}

	// Hard delete.
	if err := c.DeleteMemory(ctx, sc, sup.New.ID, engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatalf("hard DeleteMemory: %v", err)
	}
	if _, err := c.GetMemory(ctx, sc, sup.New.ID); !engram.IsNotFound(err) {
		t.Errorf("after hard delete: %v, want not found", err)
	}

	// Delete an episode: the memory formed from it alone goes with it.
	deleted, err := c.DeleteEpisode(ctx, sc, added.Episodes[1].ID)
	if err != nil {
		t.Fatalf("DeleteEpisode: %v", err)
	}
	if len(deleted.Removed) != 1 || len(deleted.Reformed) != 0 {
		t.Errorf("DeleteEpisode = %+v, want the one memory formed from it removed", deleted)
	}
	if _, err := c.GetMemory(ctx, sc, deleted.Removed[0]); !engram.IsNotFound(err) {
		t.Errorf("the memory formed from the deleted episode: %v, want not found", err)
	}
	if _, err := c.GetEpisode(ctx, sc, added.Episodes[1].ID); !engram.IsNotFound(err) {
		t.Errorf("after DeleteEpisode: %v, want not found", err)
	}

	// Audit.
	ap, err := c.Audit(ctx, sc, engram.AuditFilter{Ops: []string{"memory.update"}})
	if err != nil {
		t.Fatalf("Audit: %v", err)
	}
	if len(ap.Entries) != 2 { // the update and the rollback
		t.Errorf("Audit(op=memory.update) = %s, want 2 entries", mustJSON(t, ap))
	}
	for _, e := range ap.Entries {
		if e.Actor != "tester" || e.Op != "memory.update" || e.Namespace != ns {
			t.Errorf("audit entry = %s", mustJSON(t, e))
		}
	}
	all, err := c.Audit(ctx, sc, engram.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	inAudit, err := eng.Audit(ctx, sc, engram.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "Audit vs in-process", all, inAudit)

	// Export, purge, import, export again: lossless.
	exportAll := func() []engram.Record {
		t.Helper()
		var recs []engram.Record
		if err := c.Export(ctx, sc, func(r engram.Record) error { recs = append(recs, r); return nil }); err != nil {
			t.Fatalf("Export: %v", err)
		}
		return recs
	}
	before := exportAll()
	var inRecs []engram.Record
	if err := eng.Export(ctx, sc, func(r engram.Record) error { inRecs = append(inRecs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	checkSame(t, "Export vs in-process", before, inRecs)
	counts := map[string]int{}
	for _, r := range before {
		counts[r.Type]++
	}
	if counts[engram.RecordEpisode] != 1 || counts[engram.RecordMemory] != 2 || counts[engram.RecordVersion] == 0 || counts[engram.RecordAudit] == 0 {
		t.Errorf("export counts = %v", counts)
	}

	purged, err := c.DeleteScope(ctx, engram.Scope{Org: "acme", Project: "bot", User: "ann"})
	if err != nil {
		t.Fatalf("DeleteScope: %v", err)
	}
	if purged.Episodes != 1 || purged.Memories != 2 || purged.Versions != counts[engram.RecordVersion] {
		t.Errorf("DeleteScope = %+v, want 1 episode, 2 memories, %d versions", purged, counts[engram.RecordVersion])
	}
	if p, err := c.ListMemories(ctx, sc, engram.MemoryFilter{}); err != nil || len(p.Memories) != 0 {
		t.Errorf("after DeleteScope: %v, %v", p, err)
	}

	var dataRecs []engram.Record
	for _, r := range before {
		if r.Type != engram.RecordAudit {
			dataRecs = append(dataRecs, r)
		}
	}
	ir, err := c.Import(ctx, sc, dataRecs)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	if ir.Episodes != 1 || ir.Memories != 2 || ir.Versions != counts[engram.RecordVersion] {
		t.Errorf("Import = %+v", ir)
	}
	again, err := c.Import(ctx, sc, dataRecs)
	if err != nil || again.Skipped != len(dataRecs) {
		t.Errorf("re-import = %+v, %v; want all %d skipped", again, err, len(dataRecs))
	}
	after := exportAll()
	var afterData []engram.Record
	for _, r := range after {
		if r.Type != engram.RecordAudit {
			afterData = append(afterData, r)
		}
	}
	checkSame(t, "data after purge and import", afterData, dataRecs)
}

// TestEngine_MetadataNumbersLossless stores metadata numbers that a float64
// cannot hold and reads them back through every read path.
func TestEngine_MetadataNumbersLossless(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	ctx := context.Background()
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	sc := engram.ScopeOf(ns)
	meta := map[string]any{"big": json.Number("12345678901234567890"), "precise": json.Number("0.10000000000000000001")}
	added, err := env.c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Form: new(bool),
		Episodes: []engram.EpisodeInput{{Content: "x", Metadata: meta}}})
	if err != nil {
		t.Fatal(err)
	}
	mems, err := env.c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "x", Metadata: meta}}})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := env.c.GetEpisode(ctx, sc, added.Episodes[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "episode metadata", ep.Metadata, meta)
	m, err := env.c.GetMemory(ctx, sc, mems[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "memory metadata", m.Metadata, meta)
	page, err := env.c.ListMemories(ctx, sc, engram.MemoryFilter{})
	if err != nil || len(page.Memories) != 1 {
		t.Fatalf("ListMemories = %v, %v", page, err)
	}
	checkSame(t, "listed memory metadata", page.Memories[0].Metadata, meta)
}

// TestEngine_BadInput sends bad requests to the real engine: each gets the
// expected status, code and sentence, and afterwards nothing is stored in
// the scope.
func TestEngine_BadInput(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{MaxBodyBytes: testMaxBody, MaxImportBytes: testMaxImport})
	id := engram.NewID()
	sc := "?org=o&project=p&user=u"
	cases := badInputCases(id, sc)

	nsJSON := `{"org":"o","project":"p","user":"u"}`
	manyEpisodes := `{"namespace":` + nsJSON + `,"episodes":[` + strings.TrimSuffix(strings.Repeat(`{"content":"a"},`, engram.MaxBatch+1), ",") + `]}`
	longContent := `{"namespace":` + nsJSON + `,"episodes":[{"content":"` + strings.Repeat("x", engram.MaxContentBytes+1) + `"}]}`
	cases = append(cases, []badInput{
		{"missing namespace", "POST", "/v1/episodes", `{"episodes":[{"content":"hi"}]}`, nil, 400, engram.EINVALID, "org is required"},
		{"missing project", "POST", "/v1/memories", `{"namespace":{"org":"o"},"memories":[{"value":"v"}]}`, nil, 400, engram.EINVALID, "project is required"},
		{"missing scope", "GET", "/v1/memories", "", nil, 400, engram.EINVALID, "org is required"},
		{"missing project in query", "GET", "/v1/episodes/" + id + "?org=o", "", nil, 400, engram.EINVALID, "project is required"},
		{"bidi override in name", "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"p","user":"u\u202Ex"},"episodes":[{"content":"hi"}]}`, nil, 400, engram.EINVALID, "namespace.user may not contain the bidirectional control character U+202E"},
		{"bidi isolate in query", "GET", "/v1/memories?org=o&project=p&user=u%E2%81%A6", "", nil, 400, engram.EINVALID, "namespace.user may not contain the bidirectional control character U+2066"},
		{"control character in name", "POST", "/v1/memories", `{"namespace":{"org":"o","project":"p","agent":"a\u0007"},"memories":[{"value":"v"}]}`, nil, 400, engram.EINVALID, "namespace.agent may not contain control characters"},
		{"slash in name", "POST", "/v1/episodes", `{"namespace":{"org":"o/x","project":"p"},"episodes":[{"content":"hi"}]}`, nil, 400, engram.EINVALID, "may not contain '/'"},
		{"no episodes", "POST", "/v1/episodes", `{"namespace":` + nsJSON + `,"episodes":[]}`, nil, 400, engram.EINVALID, "no episodes given"},
		{"too many episodes", "POST", "/v1/episodes", manyEpisodes, nil, 413, engram.ETOOLARGE, "more than the limit of 1000"},
		{"content too long", "POST", "/v1/episodes", longContent, nil, 400, engram.EINVALID, "longer than the limit of 65536"},
		{"empty content", "POST", "/v1/episodes", `{"namespace":` + nsJSON + `,"episodes":[{"content":"ok"},{"content":""}]}`, nil, 400, engram.EINVALID, "episodes[1]: episode: content is required"},
		{"bad modality", "POST", "/v1/episodes", `{"namespace":` + nsJSON + `,"episodes":[{"content":"x","modality":"smell"}]}`, nil, 400, engram.EINVALID, `modality "smell"`},
		{"bad client id", "POST", "/v1/episodes", `{"namespace":` + nsJSON + `,"episodes":[{"id":"abc","content":"x"}]}`, nil, 400, engram.EINVALID, `"abc" is not a valid id`},
		{"confidence out of range", "POST", "/v1/memories", `{"namespace":` + nsJSON + `,"memories":[{"value":"v","confidence":1.5}]}`, nil, 400, engram.EINVALID, "confidence 1.5 is outside 0..1"},
		{"bad kind", "POST", "/v1/memories", `{"namespace":` + nsJSON + `,"memories":[{"value":"v","kind":"dream"}]}`, nil, 400, engram.EINVALID, `kind "dream"`},
		{"name too long", "DELETE", "/v1/scope" + sc + "&agent=" + strings.Repeat("a", 200), "", nil, 400, engram.EINVALID, "agent is longer than 128 bytes"},
		{"limit too large", "GET", "/v1/memories" + sc + "&limit=1001", "", nil, 400, engram.EINVALID, "limit 1001 is above the maximum of 1000"},
		{"negative limit", "GET", "/v1/episodes" + sc + "&limit=-1", "", nil, 400, engram.EINVALID, "limit -1 is negative"},
		{"bad status filter", "GET", "/v1/memories" + sc + "&status=gone", "", nil, 400, engram.EINVALID, `status "gone"`},
		{"empty query", "POST", "/v1/search", `{"scope":` + nsJSON + `,"query":"  "}`, nil, 400, engram.EINVALID, "query is required"},
		{"k too large", "POST", "/v1/search", `{"scope":` + nsJSON + `,"query":"x","k":201}`, nil, 400, engram.EINVALID, "k 201 is above the maximum of 200"},
		{"project-wide purge", "DELETE", "/v1/scope?org=o&project=p", "", nil, 400, engram.EINVALID, "refusing to delete a whole project"},
		{"import outside scope", "POST", "/v1/import" + sc, `{"type":"episode","episode":{"id":"` + id + `","namespace":{"org":"o","project":"p","user":"v"},"content":"x","occurred_at":"2024-01-01T00:00:00Z","received_at":"2024-01-01T00:00:00Z"}}` + "\n", nil, 400, engram.EINVALID, "outside the import scope"},
		{"import type mismatch", "POST", "/v1/import" + sc, `{"type":"memory","episode":{"id":"` + id + `","namespace":{"org":"o","project":"p","user":"u"},"content":"x"}}` + "\n", nil, 400, engram.EINVALID, "does not match its payload"},
	}...)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := do(t, tc.method, env.srv.URL+tc.path, tc.body, tc.header...)
			checkBadInput(t, tc, r)
		})
	}

	// Nothing was stored anywhere the cases could have written to.
	ctx := context.Background()
	for _, s := range []engram.Scope{{Org: "o", Project: "p", User: "u"}, {Org: "o", Project: "p"}, {Org: "o", Project: "p", User: "v"}} {
		eps, err := env.c.ListEpisodes(ctx, s, engram.EpisodeFilter{})
		if err != nil || len(eps.Episodes) != 0 {
			t.Errorf("episodes in %+v after bad input: %v, %v", s, eps, err)
		}
		mems, err := env.c.ListMemories(ctx, s, engram.MemoryFilter{Statuses: []engram.Status{"active", "superseded", "deleted", "expired"}})
		if err != nil || len(mems.Memories) != 0 {
			t.Errorf("memories in %+v after bad input: %v, %v", s, mems, err)
		}
		au, err := env.c.Audit(ctx, s, engram.AuditFilter{})
		if err != nil || len(au.Entries) != 0 {
			t.Errorf("audit entries in %+v after bad input: %s, %v", s, mustJSON(t, au), err)
		}
	}
}

// TestEngine_ReadyzAfterClose: once the engine's store is closed, /readyz
// answers 503 while /healthz still says the process serves.
func TestEngine_ReadyzAfterClose(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	if r := do(t, "GET", env.srv.URL+"/readyz", ""); r.Status != 200 {
		t.Fatalf("readyz before close: %d %s", r.Status, r.Body)
	}
	if err := env.eng.Close(); err != nil {
		t.Fatal(err)
	}
	r := do(t, "GET", env.srv.URL+"/readyz", "")
	if got, want := r.Status, 503; got != want {
		t.Fatalf("readyz after close: status %d, want %d (%s)", got, want, r.Body)
	}
	if e := errorOf(t, r); e.Error.Code != engram.EUNAVAILABLE {
		t.Errorf("readyz after close: %s", r.Body)
	}
	if r := do(t, "GET", env.srv.URL+"/healthz", ""); r.Status != 200 {
		t.Errorf("healthz after close: %d", r.Status)
	}
	_, err := env.c.ListEpisodes(context.Background(), engram.Scope{Org: "o", Project: "p"}, engram.EpisodeFilter{})
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Errorf("ListEpisodes on a closed engine: %v, want code %s", err, want)
	}
}
