package http_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// marker is in every text of tenant A, so that any answer to B that
// contains it has leaked A's data.
const marker = "zebracorn"

// TestEngine_TenantIsolation stores data as tenant A and then calls every
// endpoint in other scopes (another org with otherwise identical names,
// another project, other users, the project level, another agent or
// session of the same user) with A's ids. Id routes must answer exactly
// like a random unknown id; lists, search, export and audit must show
// nothing of A; writes must fail and leave A's data as it was.
func TestEngine_TenantIsolation(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	c := env.c
	ctx := context.Background()
	nsA := engram.Namespace{Org: "a", Project: "p", User: "u1", Agent: "ag1", Session: "s1"}
	scA := engram.ScopeOf(nsA)

	added, err := c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsA, Episodes: []engram.EpisodeInput{
		{Role: "user", Content: "My " + marker + " lives in Lisbon.", Metadata: map[string]any{"secret": marker}},
		{Role: "user", Content: "Another " + marker + " fact."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mems, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{
		{Value: "The " + marker + " prefers tea.", Cues: []string{marker}, Metadata: map[string]any{"secret": marker}},
		{Value: "The " + marker + " is deleted but restorable."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	v := "The " + marker + " prefers green tea."
	if _, err := c.UpdateMemory(ctx, scA, mems[0].ID, engram.MemoryPatch{Value: &v}); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteMemory(ctx, scA, mems[1].ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	episodeIDs := []string{added.Episodes[0].ID, added.Episodes[1].ID}
	memoryIDs := []string{mems[0].ID, mems[1].ID, added.Memories[0].ID}
	allIDs := append(append([]string(nil), episodeIDs...), memoryIDs...)

	exportA := func() []engram.Record {
		t.Helper()
		var recs []engram.Record
		if err := c.Export(ctx, scA, func(r engram.Record) error { recs = append(recs, r); return nil }); err != nil {
			t.Fatal(err)
		}
		return recs
	}
	before := exportA()

	// In A's own scope the id filter finds exactly what it names; the
	// checks below show that it finds nothing from elsewhere.
	got, err := c.ListMemories(ctx, scA, engram.MemoryFilter{IDs: []string{memoryIDs[0], engram.NewID()}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Memories) != 1 || got.Memories[0].ID != memoryIDs[0] {
		t.Fatalf("ListMemories(ids) in A's scope = %s, want only memory %s", mustJSON(t, got), memoryIDs[0])
	}
	if len(before) == 0 || !strings.Contains(mustJSON(t, before), marker) {
		t.Fatal("A's export is empty; the test would prove nothing")
	}

	// noLeak fails if v, as JSON, contains anything of A.
	noLeak := func(t *testing.T, what string, v any) {
		t.Helper()
		j := mustJSON(t, v)
		if strings.Contains(j, marker) {
			t.Errorf("%s leaks A's text: %s", what, j)
		}
		for _, id := range allIDs {
			if strings.Contains(j, id) {
				t.Errorf("%s leaks A's id %s: %s", what, id, j)
			}
		}
	}

	type idRoute struct {
		method, path, query, body string
		ids                       []string
	}
	idRoutes := []idRoute{
		{"GET", "/v1/episodes/%s", "", "", episodeIDs},
		{"DELETE", "/v1/episodes/%s", "", "", episodeIDs},
		{"GET", "/v1/memories/%s", "", "", memoryIDs},
		{"PATCH", "/v1/memories/%s", "", `{"value":"overwritten"}`, memoryIDs},
		{"DELETE", "/v1/memories/%s", "", "", memoryIDs},
		{"DELETE", "/v1/memories/%s", "hard=true&reason=x", "", memoryIDs},
		{"POST", "/v1/memories/%s/supersede", "", `{"new":{"value":"replaced"}}`, memoryIDs},
		{"POST", "/v1/memories/%s/restore", "", `{"reason":"x"}`, memoryIDs},
		{"GET", "/v1/memories/%s/history", "", "", memoryIDs},
		{"POST", "/v1/memories/%s/rollback", "", `{"version":1}`, memoryIDs},
	}

	for _, b := range []struct {
		name string
		s    engram.Scope
	}{
		{"other org", engram.Scope{Org: "b", Project: "p", User: "u1", Agent: "ag1", Session: "s1", IncludeShared: true}},
		{"other project", engram.Scope{Org: "a", Project: "q", User: "u1", Agent: "ag1", Session: "s1"}},
		{"other user", engram.Scope{Org: "a", Project: "p", User: "u2", Agent: "ag1", Session: "s1"}},
		{"other user with shared", engram.Scope{Org: "a", Project: "p", User: "u2", IncludeShared: true}},
		{"project level", engram.Scope{Org: "a", Project: "p"}},
		{"project level with shared", engram.Scope{Org: "a", Project: "p", IncludeShared: true}},
		{"same user other agent", engram.Scope{Org: "a", Project: "p", User: "u1", Agent: "ag2"}},
		{"same user other session", engram.Scope{Org: "a", Project: "p", User: "u1", Session: "s2"}},
		{"same user and agent other session", engram.Scope{Org: "a", Project: "p", User: "u1", Agent: "ag1", Session: "s2"}},
	} {
		t.Run(b.name, func(t *testing.T) {
			q := scopeQuery(b.s)
			for _, rt := range idRoutes {
				query := q
				if rt.query != "" {
					query += "&" + rt.query
				}
				unknown := engram.NewID()
				ru := do(t, rt.method, env.srv.URL+strings.Replace(rt.path, "%s", unknown, 1)+"?"+query, rt.body)
				if ru.Status != 404 {
					t.Fatalf("%s %s with an unknown id: status %d %s, want 404", rt.method, rt.path, ru.Status, ru.Body)
				}
				want := strings.ReplaceAll(string(ru.Body), unknown, "ID")
				for _, id := range rt.ids {
					ra := do(t, rt.method, env.srv.URL+strings.Replace(rt.path, "%s", id, 1)+"?"+query, rt.body)
					got := strings.ReplaceAll(string(ra.Body), id, "ID")
					if ra.Status != ru.Status || got != want || ra.Header.Get("Content-Type") != ru.Header.Get("Content-Type") {
						t.Errorf("%s %s with A's id: %d %s; an unknown id gets %d %s", rt.method, rt.path, ra.Status, got, ru.Status, want)
					}
				}
			}

			eps, err := c.ListEpisodes(ctx, b.s, engram.EpisodeFilter{})
			if err != nil {
				t.Fatal(err)
			}
			noLeak(t, "ListEpisodes", eps)
			eps, err = c.ListEpisodes(ctx, b.s, engram.EpisodeFilter{Contains: marker, Metadata: map[string]any{"secret": marker}})
			if err != nil || len(eps.Episodes) != 0 {
				t.Errorf("ListEpisodes(contains marker) = %v, %v", eps, err)
			}
			all := engram.MemoryFilter{Statuses: []engram.Status{"active", "superseded", "deleted", "expired"}}
			ms, err := c.ListMemories(ctx, b.s, all)
			if err != nil {
				t.Fatal(err)
			}
			noLeak(t, "ListMemories", ms)
			byID := all
			byID.IDs = memoryIDs
			ms, err = c.ListMemories(ctx, b.s, byID)
			if err != nil {
				t.Fatal(err)
			}
			noLeak(t, "ListMemories by A's ids", ms)
			r := do(t, "POST", env.srv.URL+"/v1/memories/list", mustJSON(t, map[string]any{"scope": b.s, "filter": all}))
			if r.Status != 200 {
				t.Errorf("POST /v1/memories/list: %d %s", r.Status, r.Body)
			}
			noLeak(t, "POST /v1/memories/list", string(r.Body))
			res, err := c.Search(ctx, engram.SearchRequest{Scope: b.s, Query: marker + " tea Lisbon", K: 200, Filter: all})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 0 {
				t.Errorf("Search found %d hits", len(res.Hits))
			}
			noLeak(t, "Search", res)
			au, err := c.Audit(ctx, b.s, engram.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			noLeak(t, "Audit", au)
			var recs []engram.Record
			if err := c.Export(ctx, b.s, func(r engram.Record) error { recs = append(recs, r); return nil }); err != nil {
				t.Fatal(err)
			}
			noLeak(t, "Export", recs)

			// Importing A's records into B is refused, not a way to copy
			// them across.
			if _, err := c.Import(ctx, b.s, before); engram.ErrorCode(err) != engram.EINVALID {
				t.Errorf("Import of A's records into B: %v, want EINVALID", err)
			}
			counts, err := c.DeleteScope(ctx, b.s)
			if b.s.User == "" && b.s.Agent == "" && b.s.Session == "" {
				if engram.ErrorCode(err) != engram.EINVALID {
					t.Errorf("DeleteScope of a project: %v, want EINVALID", err)
				}
			} else if err != nil || *counts != (engram.PurgeCounts{}) {
				t.Errorf("DeleteScope = %v, %v; want nothing purged", counts, err)
			}
		})
	}

	// A client-chosen id is per tenant: another org may use A's ids as if
	// they did not exist.
	nsB := engram.Namespace{Org: "b", Project: "p", User: "u1"}
	if _, err := c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: nsB, Form: new(bool),
		Episodes: []engram.EpisodeInput{{ID: episodeIDs[0], Content: "B's own"}}}); err != nil {
		t.Errorf("AddEpisodes in org b with an id of org a: %v", err)
	}
	if _, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsB,
		Memories: []engram.Memory{{ID: memoryIDs[0], Value: "B's own"}}}); err != nil {
		t.Errorf("AddMemories in org b with an id of org a: %v", err)
	}

	checkSame(t, "A's data after B's attempts", exportA(), before)
}

func scopeQuery(s engram.Scope) string {
	q := url.Values{}
	for k, v := range map[string]string{"org": s.Org, "project": s.Project, "user": s.User, "agent": s.Agent, "session": s.Session} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if s.IncludeShared {
		q.Set("include_shared", "true")
	}
	return q.Encode()
}
