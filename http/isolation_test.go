package http_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
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
		{Value: "Last summer I hiked in Yosemite with Melanie and " + strings.ToUpper(marker[:1]) + marker[1:] + "."},
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
	memoryIDs := []string{mems[0].ID, mems[1].ID, mems[2].ID, added.Memories[0].ID}
	entityIDs, communityIDs := graphOf(t, c, scA)
	allIDs := slices.Concat(episodeIDs, memoryIDs, entityIDs, communityIDs)

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
		{"GET", "/v1/entities/%s", "", "", entityIDs},
		{"DELETE", "/v1/entities/%s", "", "", entityIDs},
		{"POST", "/v1/entities/%s/merge", "", `{"from":["` + engram.NewID() + `"]}`, entityIDs},
		{"POST", "/v1/entities/%s/split", "", `{"name":"x","memories":["` + memoryIDs[2] + `"]}`, entityIDs},
		{"GET", "/v1/entities/%s/history", "", "", entityIDs},
		{"GET", "/v1/graph", "entity=%s&hops=2", "", entityIDs},
		{"GET", "/v1/communities/%s", "", "", communityIDs},
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
			narrowed := b.s.Agent != "" || b.s.Session != ""
			for _, rt := range idRoutes {
				query := q
				if rt.query != "" {
					query += "&" + rt.query
				}
				// The id goes wherever the route has %s: path or query.
				call := func(id string) rawResponse {
					return do(t, rt.method, env.srv.URL+strings.ReplaceAll(rt.path+"?"+query, "%s", id), rt.body)
				}
				unknown := engram.NewID()
				ru := call(unknown)
				// Entity edits refuse a narrowed scope before they look
				// for the entity: 400 for every id alike.
				edit := narrowed && strings.HasPrefix(rt.path, "/v1/entities/") && rt.method != "GET"
				if ru.Status != 404 && !(edit && ru.Status == 400) {
					t.Fatalf("%s %s with an unknown id: status %d %s, want 404", rt.method, rt.path, ru.Status, ru.Body)
				}
				want := strings.ReplaceAll(string(ru.Body), unknown, "ID")
				for _, id := range rt.ids {
					ra := call(id)
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
			ents, err := c.ListEntities(ctx, b.s, engram.EntityFilter{Limit: engram.MaxEntityLimit})
			if err != nil {
				t.Fatal(err)
			}
			noLeak(t, "ListEntities", ents)
			for _, one := range []engram.EntityFilter{{Limit: 1}, {Limit: 1, Prefix: marker}} {
				if ents, err := c.ListEntities(ctx, b.s, one); err != nil || len(ents.Entities) != 0 || ents.Next != "" {
					t.Errorf("ListEntities(%+v) = %s, %v; want an empty last page", one, mustJSON(t, ents), err)
				}
			}
			g, err := c.Graph(ctx, b.s, engram.GraphRequest{Limit: engram.MaxGraphLimit})
			if err != nil {
				t.Fatal(err)
			}
			noLeak(t, "Graph", g)
			cs, err := c.ListCommunities(ctx, b.s)
			if err != nil {
				t.Fatal(err)
			}
			noLeak(t, "ListCommunities", cs)

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

	// B's own entity takes nothing of A's: a merge from A's entities and
	// a split by A's memories answer as for unknown ids.
	if _, err := c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsB,
		Memories: []engram.Memory{{Value: "I met Melanie in Lisbon."}, {Value: "Melanie called me."}}}); err != nil {
		t.Fatal(err)
	}
	scB := engram.ScopeOf(nsB)
	bEnts, err := c.ListEntities(ctx, scB, engram.EntityFilter{Prefix: "Melanie"})
	if err != nil || len(bEnts.Entities) != 1 {
		t.Fatalf("B's Melanie: %v, %v", bEnts, err)
	}
	melB := "/v1/entities/" + bEnts.Entities[0].ID
	for _, rt := range []struct{ path, body string }{
		{melB + "/merge", `{"from":["%s"]}`},
		{melB + "/split", `{"name":"x","memories":["%s"]}`},
	} {
		call := func(id string) string {
			r := do(t, "POST", env.srv.URL+rt.path+"?"+scopeQuery(scB), strings.ReplaceAll(rt.body, "%s", id))
			return fmt.Sprintf("%d %s", r.Status, strings.ReplaceAll(string(r.Body), id, "ID"))
		}
		unknown := engram.NewID()
		want := call(unknown)
		for _, id := range slices.Concat(entityIDs, memoryIDs) {
			if got := call(id); got != want {
				t.Errorf("POST %s in B with A's id: %s; an unknown id gets %s", rt.path, got, want)
			}
		}
	}

	checkSame(t, "A's data after B's attempts", exportA(), before)
	if e, cm := graphOf(t, c, scA); !slices.Equal(e, entityIDs) || !slices.Equal(cm, communityIDs) {
		t.Errorf("A's entities %v and communities %v after B's attempts, want %v and %v", e, cm, entityIDs, communityIDs)
	}
}

// graphOf returns the ids of the entities and communities of s's user
// (s itself sees all the entities), failing unless there are some of
// each: communities are refreshed first.
func graphOf(t *testing.T, c *engramhttp.Client, s engram.Scope) (entities, communities []string) {
	t.Helper()
	ctx := context.Background()
	user := engram.Scope{Org: s.Org, Project: s.Project, User: s.User}
	if _, err := c.RefreshCommunities(ctx, user, false); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []engram.Scope{user, s} {
		page, err := c.ListEntities(ctx, sc, engram.EntityFilter{Limit: engram.MaxEntityLimit})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, en := range page.Entities {
			ids = append(ids, en.ID)
		}
		if entities != nil && !slices.Equal(ids, entities) {
			t.Fatalf("entities in %+v: %v; its user has %v", sc, ids, entities)
		}
		entities = ids
	}
	l, err := c.ListCommunities(ctx, user)
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range l.Communities {
		communities = append(communities, cm.ID)
	}
	if len(entities) < 2 || len(communities) == 0 {
		t.Fatalf("%+v has entities %v and communities %v; the test would prove little", s, entities, communities)
	}
	return entities, communities
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
