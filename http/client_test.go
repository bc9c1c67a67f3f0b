package http_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

func newFakeServer(t testing.TB, svc *fakeService, opts engramhttp.ServerOptions) (*httptest.Server, *engramhttp.Client) {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	srv := httptest.NewServer(engramhttp.NewServer(svc, opts))
	t.Cleanup(srv.Close)
	return srv, engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{})
}

// sameJSON reports whether a and b encode to the same JSON, which is how
// the two sides of the wire compare (metadata numbers arrive as
// json.Number).
func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}

func tp(s string) *time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return &t
}

// TestClient_ArgumentsRoundTrip calls every Service method through the
// client and checks that the service behind the server received exactly
// the arguments given: the client's encoding and the server's parsing
// agree on every field.
func TestClient_ArgumentsRoundTrip(t *testing.T) {
	svc := &fakeService{}
	_, c := newFakeServer(t, svc, engramhttp.ServerOptions{})
	ctx := engram.WithActor(context.Background(), "tester")
	sc := engram.Scope{Org: "acme", Project: "bot", User: "u 1", Agent: "a/b?", Session: "s&1=2", IncludeShared: true}
	id := engram.NewID()
	yes := true
	kind := engram.KindCore
	val := "new value"

	memFilter := engram.MemoryFilter{
		Kinds:         []engram.Kind{engram.KindCore, engram.KindSemantic},
		Statuses:      []engram.Status{engram.StatusActive, engram.StatusDeleted},
		CreatedAfter:  tp("2024-01-01T00:00:00Z"),
		CreatedBefore: tp("2024-02-01T00:00:00.123456789+02:00"),
		ValidAt:       tp("2024-01-15T00:00:00Z"),
		ValidAfter:    tp("2023-01-01T00:00:00Z"),
		ValidBefore:   tp("2025-01-01T00:00:00Z"),
		Metadata: map[string]any{
			"city": "Paris", "n": json.Number("3"), "s3": "3", "b": true, "quoted": `"x"`,
			"dotted.key": "v", "big": json.Number("12345678901234567890"), "obj": map[string]any{"a": json.Number("1")},
		},
		MetadataIn: map[string][]any{"city": {"Paris", "Rome"}, "n": {json.Number("1"), "1"}},
		Contains:   "coffee & tea",
		IDs:        []string{engram.NewID(), engram.NewID()},
		Sources:    []string{engram.NewID()},
		Limit:      7,
		Cursor:     "abc/def=",
	}
	epFilter := engram.EpisodeFilter{
		Roles: []string{"user", "assistant"}, Speaker: "Ann",
		OccurredAfter: tp("2024-01-01T00:00:00Z"), OccurredBefore: tp("2024-12-31T23:59:59.5Z"),
		Metadata: map[string]any{"channel": "slack", "n": json.Number("2.50")},
		Contains: "hello", Limit: 3, Cursor: "c1",
	}
	auditFilter := engram.AuditFilter{Ops: []string{"memory.add", "memory.update"}, After: tp("2024-01-01T00:00:00Z"), Before: tp("2024-06-01T00:00:00Z"), Limit: 9, Cursor: "c2"}
	addEp := engram.AddEpisodesRequest{
		Namespace: sc.Namespace(),
		Episodes: []engram.EpisodeInput{{ID: id, Role: "user", Speaker: "Ann", Content: "I like tea", Modality: engram.ModalityText,
			OccurredAt: tp("2024-03-01T10:00:00Z"), Metadata: map[string]any{"n": json.Number("1.10")}}},
		Form: &yes,
	}
	addMem := engram.AddMemoriesRequest{Namespace: sc.Namespace(), Memories: []engram.Memory{{Kind: engram.KindCore, Value: "likes tea", Cues: []string{"tea"}, Confidence: 0.9}}}
	patch := engram.MemoryPatch{Kind: &kind, Value: &val, Cues: &[]string{"a"}, ValidFrom: tp("2024-01-01T00:00:00Z"), Metadata: map[string]any{"k": "v"}, Reason: "fix"}
	sup := engram.SupersedeRequest{New: engram.Memory{Value: "likes coffee"}, At: tp("2024-04-01T00:00:00Z"), Reason: "changed"}
	search := engram.SearchRequest{Scope: sc, Query: "what does Ann drink", K: 5, Filter: memFilter, Explain: true, Channels: []string{"bm25"}}
	recs := []engram.Record{{Type: engram.RecordEpisode, Episode: &engram.Episode{ID: id, Namespace: sc.Namespace(), Content: "x", Metadata: map[string]any{"n": json.Number("1")}}}}

	for _, tc := range []struct {
		method string
		call   func() error
		id     string
		arg    any
	}{
		{"AddEpisodes", func() error { _, err := c.AddEpisodes(ctx, addEp); return err }, "", addEp},
		{"AddMemories", func() error { _, err := c.AddMemories(ctx, addMem); return err }, "", addMem},
		{"GetEpisode", func() error { _, err := c.GetEpisode(ctx, sc, id); return err }, id, nil},
		{"GetMemory", func() error { _, err := c.GetMemory(ctx, sc, id); return err }, id, nil},
		{"ListEpisodes", func() error { _, err := c.ListEpisodes(ctx, sc, epFilter); return err }, "", epFilter},
		{"ListMemories", func() error { _, err := c.ListMemories(ctx, sc, memFilter); return err }, "", memFilter},
		{"Search", func() error { _, err := c.Search(ctx, search); return err }, "", search},
		{"UpdateMemory", func() error { _, err := c.UpdateMemory(ctx, sc, id, patch); return err }, id, patch},
		{"SupersedeMemory", func() error { _, err := c.SupersedeMemory(ctx, sc, id, sup); return err }, id, sup},
		{"DeleteMemory", func() error { return c.DeleteMemory(ctx, sc, id, engram.DeleteOptions{Hard: true, Reason: "gdpr"}) }, id, engram.DeleteOptions{Hard: true, Reason: "gdpr"}},
		{"RestoreMemory", func() error { _, err := c.RestoreMemory(ctx, sc, id, "oops"); return err }, id, "oops"},
		{"History", func() error { _, err := c.History(ctx, sc, id); return err }, id, nil},
		{"Rollback", func() error { _, err := c.Rollback(ctx, sc, id, 3, "back"); return err }, id, [2]any{3, "back"}},
		{"DeleteEpisode", func() error { _, err := c.DeleteEpisode(ctx, sc, id); return err }, id, nil},
		{"DeleteScope", func() error { _, err := c.DeleteScope(ctx, sc); return err }, "", nil},
		{"Import", func() error { _, err := c.Import(ctx, sc, recs); return err }, "", recs},
		{"Audit", func() error { _, err := c.Audit(ctx, sc, auditFilter); return err }, "", auditFilter},
		{"Export", func() error { return c.Export(ctx, sc, func(engram.Record) error { return nil }) }, "", nil},
		{"ListCommunities", func() error { _, err := c.ListCommunities(ctx, sc); return err }, "", nil},
		{"GetCommunity", func() error { _, err := c.GetCommunity(ctx, sc, id); return err }, id, nil},
		{"RefreshCommunities", func() error { _, err := c.RefreshCommunities(ctx, sc, true); return err }, "", true},
	} {
		t.Run(tc.method, func(t *testing.T) {
			before := len(svc.Calls())
			if err := tc.call(); err != nil {
				t.Fatal(err)
			}
			calls := svc.Calls()
			if got, want := len(calls), before+1; got != want {
				t.Fatalf("service calls = %d, want %d", got, want)
			}
			got := calls[len(calls)-1]
			if got.Method != tc.method {
				t.Errorf("method = %s, want %s", got.Method, tc.method)
			}
			if got, want := got.Actor, "tester"; got != want {
				t.Errorf("actor = %q, want %q", got, want)
			}
			wantScope := sc
			switch tc.method {
			case "AddEpisodes", "AddMemories":
				wantScope = engram.ScopeOf(sc.Namespace())
			}
			if got.Scope != wantScope {
				t.Errorf("scope = %+v, want %+v", got.Scope, wantScope)
			}
			if got.ID != tc.id {
				t.Errorf("id = %q, want %q", got.ID, tc.id)
			}
			if !sameJSON(t, got.Arg, tc.arg) {
				a, _ := json.Marshal(got.Arg)
				b, _ := json.Marshal(tc.arg)
				t.Errorf("argument differs:\n got %s\nwant %s", a, b)
			}
		})
	}
}

// TestClient_ListMemoriesIDs: id lists too long for a query string, or
// with an empty id a query string would drop, reach the service whole.
func TestClient_ListMemoriesIDs(t *testing.T) {
	svc := &fakeService{}
	_, c := newFakeServer(t, svc, engramhttp.ServerOptions{})
	many := make([]string, engram.MaxLimit)
	for i := range many {
		many[i] = engram.NewID()
	}
	for _, tc := range []struct {
		name string
		ids  []string
	}{
		{"one", many[:1]},
		{"many", many},
		{"with an empty id", []string{many[0], ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := engram.MemoryFilter{IDs: tc.ids, Kinds: []engram.Kind{engram.KindCore}}
			if _, err := c.ListMemories(context.Background(), engram.Scope{Org: "o", Project: "p"}, f); err != nil {
				t.Fatal(err)
			}
			if got := svc.last(); got.Method != "ListMemories" || !sameJSON(t, got.Arg, f) {
				t.Errorf("service got %s %v, want ListMemories with %d ids", got.Method, got.Arg, len(tc.ids))
			}
		})
	}
}

// TestClient_MetadataNumbersExact checks that a metadata number too big
// for a float64 survives the trip both ways.
func TestClient_MetadataNumbersExact(t *testing.T) {
	svc := &fakeService{}
	_, c := newFakeServer(t, svc, engramhttp.ServerOptions{})
	big := json.Number("123456789012345678901234567890")
	res, err := c.AddEpisodes(context.Background(), engram.AddEpisodesRequest{
		Namespace: engram.Namespace{Org: "o", Project: "p"},
		Episodes:  []engram.EpisodeInput{{Content: "x", Metadata: map[string]any{"big": big}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := svc.last().Arg.(engram.AddEpisodesRequest)
	if got := req.Episodes[0].Metadata["big"]; got != big {
		t.Errorf("server got %#v, want %#v", got, big)
	}
	if got := res.Episodes[0].Metadata["big"]; got != big {
		t.Errorf("client got %#v, want %#v", got, big)
	}
}

func TestClient_Actor(t *testing.T) {
	svc := &fakeService{}
	srv, _ := newFakeServer(t, svc, engramhttp.ServerOptions{})
	sc := engram.Scope{Org: "o", Project: "p"}
	for _, tc := range []struct {
		name     string
		optActor string
		ctxActor string
		want     string
	}{
		{"default", "", "", "api"},
		{"option", "cli:ann", "", "cli:ann"},
		{"context wins", "cli:ann", "agent-7", "agent-7"},
	} {
		c := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Actor: tc.optActor})
		ctx := context.Background()
		if tc.ctxActor != "" {
			ctx = engram.WithActor(ctx, tc.ctxActor)
		}
		if _, err := c.DeleteScope(ctx, sc); err != nil {
			t.Fatal(err)
		}
		if got := svc.last().Actor; got != tc.want {
			t.Errorf("%s: actor = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestClient_InvalidIDNotSent(t *testing.T) {
	svc := &fakeService{}
	_, c := newFakeServer(t, svc, engramhttp.ServerOptions{})
	sc := engram.Scope{Org: "o", Project: "p"}
	for _, id := range []string{"", ".", "..", "abc", "01hzy3v7q8x2m4n6p8r0s2t4v6"} {
		_, err := c.GetMemory(context.Background(), sc, id)
		if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
			t.Errorf("GetMemory(%q): code = %q, want %q (%v)", id, got, want, err)
		}
		if _, err := c.DeleteEpisode(context.Background(), sc, id); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("DeleteEpisode(%q): %v, want EINVALID", id, err)
		}
	}
	if calls := svc.Calls(); len(calls) != 0 {
		t.Errorf("the service was called: %v", calls)
	}
}

func TestClient_Unreachable(t *testing.T) {
	srv := httptest.NewServer(nil)
	url := srv.URL
	srv.Close() // nothing listens there now
	err := engramhttp.NewClient(url, engramhttp.ClientOptions{}).Health(context.Background())
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Errorf("code = %q, want %q (%v)", got, want, err)
	}

	err = engramhttp.NewClient("localhost:8080", engramhttp.ClientOptions{}).Health(context.Background())
	if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
		t.Errorf("bad base URL: code = %q, want %q (%v)", got, want, err)
	}
}

// TestClient_Timeout: the client's own deadline is EUNAVAILABLE, the
// caller's cancellation is the context's error.
func TestClient_Timeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	svc := &fakeService{}
	srv, _ := newFakeServer(t, svc, engramhttp.ServerOptions{Ready: func(ctx context.Context) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}})

	c := engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Timeout: 50 * time.Millisecond})
	err := c.Ready(context.Background())
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Errorf("timeout: code = %q, want %q (%v)", got, want, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	c = engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Timeout: -1})
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if err := c.Ready(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

func TestClient_Export(t *testing.T) {
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	recs := []engram.Record{
		{Type: engram.RecordEpisode, Episode: &engram.Episode{ID: engram.NewID(), Namespace: ns, Content: "a"}},
		{Type: engram.RecordMemory, Memory: &engram.Memory{ID: engram.NewID(), Namespace: ns, Value: "b"}},
		{Type: engram.RecordAudit, Audit: &engram.AuditEntry{ID: engram.NewID(), Namespace: ns, Op: "episode.add"}},
	}
	sc := engram.ScopeOf(ns)
	collect := func(c *engramhttp.Client) ([]engram.Record, error) {
		var got []engram.Record
		err := c.Export(context.Background(), sc, func(r engram.Record) error {
			got = append(got, r)
			return nil
		})
		return got, err
	}

	t.Run("all", func(t *testing.T) {
		_, c := newFakeServer(t, &fakeService{exported: recs}, engramhttp.ServerOptions{})
		got, err := collect(c)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, got, recs) {
			t.Errorf("records differ: got %d, want %d", len(got), len(recs))
		}
	})
	t.Run("empty", func(t *testing.T) {
		_, c := newFakeServer(t, &fakeService{}, engramhttp.ServerOptions{})
		got, err := collect(c)
		if err != nil || len(got) != 0 {
			t.Errorf("got %d records, err %v; want none", len(got), err)
		}
	})
	t.Run("error before the first record", func(t *testing.T) {
		srv, c := newFakeServer(t, &fakeService{err: engram.Errorf(engram.EINVALID, "namespace: org is required")}, engramhttp.ServerOptions{})
		r := do(t, "GET", srv.URL+"/v1/export", "")
		if r.Status != 400 || errorOf(t, r).Error.Message != "namespace: org is required" {
			t.Errorf("raw: %d %s", r.Status, r.Body)
		}
		_, err := collect(c)
		if got, want := engram.ErrorMessage(err), "namespace: org is required"; got != want {
			t.Errorf("err = %v, want message %q", err, want)
		}
	})
	t.Run("error mid-stream", func(t *testing.T) {
		_, c := newFakeServer(t, &fakeService{exported: recs[:2], exportErr: engram.Errorf(engram.EUNAVAILABLE, "database went away")}, engramhttp.ServerOptions{})
		got, err := collect(c)
		if len(got) != 2 {
			t.Errorf("got %d records before the error, want 2", len(got))
		}
		if engram.ErrorCode(err) != engram.EUNAVAILABLE || engram.ErrorMessage(err) != "database went away" {
			t.Errorf("err = %v, want EUNAVAILABLE database went away", err)
		}
	})
	t.Run("internal error mid-stream is generic", func(t *testing.T) {
		_, c := newFakeServer(t, &fakeService{exported: recs[:1], exportErr: errors.New("sqlite: /secret/path corrupt")}, engramhttp.ServerOptions{})
		_, err := collect(c)
		if engram.ErrorCode(err) != engram.EINTERNAL || engram.ErrorMessage(err) != "internal error" {
			t.Errorf("err = %v, want a generic internal error", err)
		}
	})
	t.Run("callback error stops", func(t *testing.T) {
		_, c := newFakeServer(t, &fakeService{exported: recs}, engramhttp.ServerOptions{})
		stop := errors.New("stop")
		n := 0
		err := c.Export(context.Background(), sc, func(engram.Record) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("err = %v after %d records, want stop after 1", err, n)
		}
	})
}

func TestClient_ImportUnencodable(t *testing.T) {
	svc := &fakeService{}
	_, c := newFakeServer(t, svc, engramhttp.ServerOptions{})
	recs := []engram.Record{{Type: engram.RecordEpisode, Episode: &engram.Episode{Content: "x", Metadata: map[string]any{"f": func() {}}}}}
	_, err := c.Import(context.Background(), engram.Scope{Org: "o", Project: "p"}, recs)
	if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
		t.Errorf("code = %q, want %q (%v)", got, want, err)
	}
	if calls := svc.Calls(); len(calls) != 0 {
		t.Errorf("the service was called: %v", calls)
	}
}

// TestClient_ImportTooLarge: the server's 413 reaches the caller as
// ETOOLARGE even though the server stops reading the stream early.
func TestClient_ImportTooLarge(t *testing.T) {
	svc := &fakeService{}
	_, c := newFakeServer(t, svc, engramhttp.ServerOptions{MaxImportBytes: 64 << 10})
	ns := engram.Namespace{Org: "o", Project: "p", User: "u"}
	recs := make([]engram.Record, 20000) // about 2 MB of NDJSON
	for i := range recs {
		recs[i] = engram.Record{Type: engram.RecordEpisode, Episode: &engram.Episode{ID: engram.NewID(), Namespace: ns, Content: "some content"}}
	}
	_, err := c.Import(context.Background(), engram.ScopeOf(ns), recs)
	if got, want := engram.ErrorCode(err), engram.ETOOLARGE; got != want {
		t.Errorf("code = %q, want %q (%v)", got, want, err)
	}
	if calls := svc.Calls(); len(calls) != 0 {
		t.Errorf("the service was called: %v", calls)
	}
}
