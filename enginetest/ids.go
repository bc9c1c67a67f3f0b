package enginetest

import (
	"encoding/json"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testEpisodeIDsOfOthers: an episode id another user of the tenant holds
// behaves exactly like a free one, through the library and over HTTP. An
// add with it succeeds as an add with a fresh id does (the same answer,
// 201 over HTTP, memories formed), at once and with a job; every read,
// listing and delete by either user then reaches only their own episode
// and the memories formed from it. (An add with another user's episode id
// answered 409 "already exists", telling the caller the id was in use.)
func testEpisodeIDsOfOthers(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	client, base := overHTTP(t, e)
	bobs := mustAddEpisodes(t, e, nsB, "Bob drinks coffee in Porto.", "Bob plays chess on Sundays.")
	taken := [2]string{bobs.Episodes[0].ID, bobs.Episodes[1].ID}
	bobMemories := countMemories(t, e, scB)
	for _, via := range []struct {
		name, user string
		svc        engram.Service
	}{{"library", "alice", e}, {"http", "carol", client}} {
		t.Run(via.name, func(t *testing.T) {
			ns := engram.Namespace{Org: nsB.Org, Project: nsB.Project, User: via.user, Session: "s1"}
			checkTakenAdds(t, e, via.svc, ns, taken)
			checkTakenReads(t, via.svc, ns, taken)
		})
	}
	t.Run("status", func(t *testing.T) { checkTakenStatus(t, base, taken[0]) })
	for i, want := range []string{"Bob drinks coffee in Porto.", "Bob plays chess on Sundays."} {
		if ep, err := e.GetEpisode(ctx, scB, taken[i]); err != nil || ep.Content != want {
			t.Errorf("bob's episode %s = %+v, %v; want his own", taken[i], ep, err)
		}
	}
	if n := countMemories(t, e, scB); n != bobMemories {
		t.Errorf("bob has %d memories, had %d", n, bobMemories)
	}
}

// checkTakenAdds adds in ns an episode with a fresh id, then one with
// taken[0] at once and one with taken[1] with a job (run by e), and wants
// the same answers.
func checkTakenAdds(t *testing.T, e *engine.Engine, svc engram.Service, ns engram.Namespace, taken [2]string) {
	t.Helper()
	add := func(id, content string, async bool) *engram.AddEpisodesResult {
		t.Helper()
		res, err := svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Async: ptr(async),
			Episodes: []engram.EpisodeInput{{ID: id, Role: "user", Speaker: "Alice", Content: content}}})
		if err != nil {
			t.Fatalf("add episode %s: %v", id, err)
		}
		if len(res.Episodes) != 1 || res.Episodes[0].ID != id || res.Episodes[0].Namespace != ns || (res.Job != nil) != async {
			t.Fatalf("add episode %s = %+v, want it stored under its id in %+v", id, res, ns)
		}
		return res
	}
	fresh := add(engram.NewID(), "Ich wohne in Köln.", false)
	same := add(taken[0], "Je travaille à Lyon.", false)
	if len(fresh.Memories) == 0 || len(same.Memories) == 0 {
		t.Errorf("add with a fresh id formed %d memories, with another user's id %d; want some each", len(fresh.Memories), len(same.Memories))
	}
	add(taken[1], "Trabajo en un hospital de Sevilla.", true)
	if n := runJobs(t, e); n != 1 {
		t.Fatalf("ran %d jobs, want 1", n)
	}
}

// checkTakenReads: the episodes ns holds under taken ids are ns's own in
// every read, their memories cite them, and deleting one leaves the
// other user's.
func checkTakenReads(t *testing.T, svc engram.Service, ns engram.Namespace, taken [2]string) {
	t.Helper()
	sc := engram.Scope{Org: ns.Org, Project: ns.Project, User: ns.User}
	for i, want := range []string{"Je travaille à Lyon.", "Trabajo en un hospital de Sevilla."} {
		ep, err := svc.GetEpisode(ctx, sc, taken[i])
		if err != nil || ep.Content != want || ep.Namespace != ns {
			t.Errorf("GetEpisode %s = %+v, %v; want %q of %s", taken[i], ep, err, want, ns.User)
		}
		p, err := svc.ListMemories(ctx, sc, engram.MemoryFilter{Sources: []string{taken[i]}, Limit: engram.MaxLimit})
		if err != nil || len(p.Memories) == 0 {
			t.Fatalf("memories of episode %s = %+v, %v; want those formed from it", taken[i], p, err)
		}
		for _, m := range p.Memories {
			if m.Namespace.User != ns.User || !slices.Contains(m.Sources, taken[i]) {
				t.Errorf("memory %+v of episode %s, want one of %s citing it", m, taken[i], ns.User)
			}
		}
	}
	p, err := svc.ListEpisodes(ctx, sc, engram.EpisodeFilter{Limit: engram.MaxLimit})
	if err != nil || len(p.Episodes) != 3 {
		t.Fatalf("episodes of %s = %+v, %v; want their 3", ns.User, p, err)
	}
	if _, err := svc.DeleteEpisode(ctx, sc, taken[0]); err != nil {
		t.Fatalf("delete episode %s: %v", taken[0], err)
	}
	if _, err := svc.GetEpisode(ctx, sc, taken[0]); code(err) != engram.ENOTFOUND {
		t.Errorf("GetEpisode after its delete: %v, want ENOTFOUND", err)
	}
	if ep, err := svc.GetEpisode(ctx, scB, taken[0]); err != nil || ep.Namespace.User != nsB.User {
		t.Errorf("bob's episode after %s deleted theirs = %+v, %v", ns.User, ep, err)
	}
}

// checkTakenStatus posts, as a raw client would, an episode with a fresh
// id and one with the taken id, and wants the same status and the same
// shape of answer.
func checkTakenStatus(t *testing.T, base, taken string) {
	t.Helper()
	post := func(id, content string) (int, map[string]any) {
		t.Helper()
		body := `{"namespace": {"org": "acme", "project": "p", "user": "dave"}, "episodes": [{"id": "` + id +
			`", "role": "user", "content": "` + content + `"}]}`
		resp, err := http.Post(base+"/v1/episodes", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
		return resp.StatusCode, out
	}
	freshStatus, fresh := post(engram.NewID(), "Vivo en Sevilla.")
	takenStatus, same := post(taken, "我住在上海。")
	if freshStatus != http.StatusCreated || takenStatus != freshStatus {
		t.Errorf("add with a fresh id: %d, with another user's id: %d %v; want 201 both", freshStatus, takenStatus, same)
	}
	if a, b := slices.Sorted(maps.Keys(fresh)), slices.Sorted(maps.Keys(same)); !slices.Equal(a, b) {
		t.Errorf("answer with a fresh id has %v, with another user's id %v", a, b)
	}
}

// testObservationIDsOfOthers: an observation id another user of the tenant
// holds is accepted as a free one, through the library and over HTTP, and
// each user's identity then holds their own observation under it. (It
// answered 409 "already exists".)
func testObservationIDsOfOthers(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	client, _ := overHTTP(t, e)
	r := rand.New(rand.NewPCG(3, 5))
	add := func(svc engram.Service, ns engram.Namespace, in engram.ObservationInput) engram.Observation {
		t.Helper()
		res, err := svc.AddObservations(ctx, engram.AddObservationsRequest{Namespace: ns, Observations: []engram.ObservationInput{in}})
		if err != nil {
			t.Fatalf("add observation %s for %s: %v", in.ID, ns.User, err)
		}
		if len(res.Observations) != 1 || res.Observations[0].ID != in.ID {
			t.Fatalf("add observation %s for %s = %+v, want it under its id", in.ID, ns.User, res)
		}
		return res.Observations[0]
	}
	bobs := noisy(r, "face", 16, 0, 1, nil)[0]
	bobs.ID = engram.NewID()
	theirs := add(e, nsB, bobs)
	for _, via := range []struct {
		name, user string
		svc        engram.Service
	}{{"library", "alice", e}, {"http", "carol", client}} {
		ns := engram.Namespace{Org: nsB.Org, Project: nsB.Project, User: via.user}
		sc := engram.ScopeOf(ns)
		add(via.svc, ns, engram.ObservationInput{ID: engram.NewID(), Modality: "face", Embedding: noisy(r, "face", 16, 1, 1, nil)[0].Embedding})
		in := noisy(r, "face", 16, 1, 1, nil)[0]
		in.ID = bobs.ID
		mine := add(via.svc, ns, in)
		d, err := via.svc.GetIdentity(ctx, sc, mine.IdentityID)
		if err != nil || !slices.ContainsFunc(d.Observations, func(o engram.Observation) bool {
			return o.ID == bobs.ID && slices.Equal(o.Embedding, in.Embedding)
		}) {
			t.Errorf("%s: %s's identity = %+v, %v; want their observation %s", via.name, via.user, d, err, bobs.ID)
		}
	}
	if d, err := e.GetIdentity(ctx, scB, theirs.IdentityID); err != nil || len(d.Observations) != 1 || !slices.Equal(d.Observations[0].Embedding, bobs.Embedding) {
		t.Errorf("bob's identity = %+v, %v; want his one observation", d, err)
	}
}
