package http_test

import (
	"context"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// axis returns n embeddings of dim values near the unit vector along a.
func axis(dim, a, n int) [][]float32 {
	var out [][]float32
	for k := 0; k < n; k++ {
		v := make([]float32, dim)
		v[a] = 1
		v[(a+1+k)%dim] = 0.1
		out = append(out, v)
	}
	return out
}

// TestIdentities_Endpoints goes through every identity route with the
// Client against the real engine: observations cluster, a width other
// than the declared one is a 400 naming the field, a link makes a person
// whose alias finds the observed episode in search, merge, split, unlink,
// history and delete work, and another user reads nothing.
func TestIdentities_Endpoints(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	ctx := context.Background()
	c := env.c
	alice := engram.Namespace{Org: "o", Project: "p", User: "alice"}
	sa, sb := engram.ScopeOf(alice), engram.Scope{Org: "o", Project: "p", User: "bob"}
	eps, err := c.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: alice, Episodes: []engram.EpisodeInput{{Role: "user", Content: "Das Boot ist am Steg gekentert."}}})
	if err != nil {
		t.Fatal(err)
	}
	var in []engram.ObservationInput
	for _, v := range axis(8, 0, 3) {
		in = append(in, engram.ObservationInput{Modality: "face", Embedding: v, EpisodeID: eps.Episodes[0].ID})
	}
	for _, v := range axis(8, 4, 2) {
		in = append(in, engram.ObservationInput{Modality: "face", Embedding: v})
	}
	res, err := c.AddObservations(ctx, engram.AddObservationsRequest{Namespace: alice, Observations: in})
	if err != nil {
		t.Fatal(err)
	}
	a, b := res.Observations[0].IdentityID, res.Observations[3].IdentityID
	if a == b || res.Observations[2].IdentityID != a || res.Observations[4].IdentityID != b {
		t.Fatalf("observations went to %+v", res.Observations)
	}
	_, err = c.AddObservations(ctx, engram.AddObservationsRequest{Namespace: alice, Observations: []engram.ObservationInput{{Modality: "face", Embedding: []float32{1, 2}}}})
	if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), "observations[0].embedding") {
		t.Errorf("a face of 2 values after 8: %v", err)
	}

	p, err := c.LinkIdentities(ctx, sa, engram.LinkRequest{Identities: []string{a}, Name: "Jürgen"})
	if err != nil || p.Name != "Jürgen" || len(p.Identities) != 1 {
		t.Fatalf("link = %+v, %v", p, err)
	}
	if _, err := c.LinkIdentities(ctx, sa, engram.LinkRequest{PersonID: p.ID, Name: "Jogi"}); err != nil {
		t.Fatal(err)
	}
	sr, err := c.Search(ctx, engram.SearchRequest{Scope: sa, Query: "Was hat Jogi erlebt?", Channels: []string{"identity"}})
	if err != nil || len(sr.Hits) == 0 || sr.Hits[0].Memory.Sources[0] != eps.Episodes[0].ID {
		t.Errorf("search by the alias = %+v, %v; want the observed episode's memory", sr, err)
	}
	if sr, err := c.Search(ctx, engram.SearchRequest{Scope: sb, Query: "Was hat Jogi erlebt?", Channels: []string{"identity"}}); err != nil || len(sr.Hits) != 0 {
		t.Errorf("bob's search by alice's alias = %+v, %v", sr, err)
	}

	d, err := c.GetIdentity(ctx, sa, a)
	if err != nil || len(d.Observations) != 3 || len(d.Episodes) != 1 || d.Identity.PersonID != p.ID {
		t.Errorf("get identity = %+v, %v", d, err)
	}
	if _, err := c.GetIdentity(ctx, sb, a); !engram.IsNotFound(err) {
		t.Errorf("bob gets alice's identity: %v", err)
	}
	if ids, err := c.ListIdentities(ctx, sa, engram.IdentityFilter{PersonID: p.ID}); err != nil || len(ids) != 1 || ids[0].ID != a {
		t.Errorf("list by person = %+v, %v", ids, err)
	}
	m, err := c.MergeIdentities(ctx, sa, engram.IdentityMergeRequest{Into: a, From: []string{b}})
	if err != nil || m.Count != 5 {
		t.Fatalf("merge = %+v, %v", m, err)
	}
	s, err := c.SplitIdentity(ctx, sa, a, engram.IdentitySplitRequest{Observations: []string{res.Observations[3].ID, res.Observations[4].ID}})
	if err != nil || s.Count != 2 {
		t.Fatalf("split = %+v, %v", s, err)
	}
	if u, err := c.UnlinkIdentity(ctx, sa, a); err != nil || u.PersonID != "" {
		t.Errorf("unlink = %+v, %v", u, err)
	}
	h, err := c.IdentityHistory(ctx, sa, a)
	var ops []string
	for _, ev := range h {
		ops = append(ops, ev.Op)
	}
	if err != nil || strings.Join(ops, " ") != "create link merge split unlink" {
		t.Errorf("history = %v, %v", ops, err)
	}
	if ps, err := c.ListPersons(ctx, sa); err != nil || len(ps) != 0 {
		t.Errorf("the person left with no identity is still listed: %+v, %v", ps, err)
	}
	if err := c.DeleteIdentity(ctx, sa, s.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetIdentity(ctx, sa, s.ID); !engram.IsNotFound(err) {
		t.Errorf("a deleted identity: %v", err)
	}
}
