package enginetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/retrieval"
)

// noisy returns n observations of modality with noise drawn from r around
// the unit centre along axis of dim values (so the centres of different
// axes are orthogonal), each tied to one of eps in turn.
func noisy(r *rand.Rand, modality string, dim, axis, n int, eps []string) []engram.ObservationInput {
	centre := make([]float64, dim)
	centre[axis] = math.Sqrt(float64(dim))
	var out []engram.ObservationInput
	for k := 0; k < n; k++ {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(centre[i]/math.Sqrt(float64(dim)) + 0.3*r.NormFloat64()/math.Sqrt(float64(dim)))
		}
		in := engram.ObservationInput{Modality: modality, Embedding: v}
		if len(eps) > 0 {
			in.EpisodeID = eps[k%len(eps)]
		}
		out = append(out, in)
	}
	return out
}

// identitiesOf returns the distinct identities a batch went to, in order.
func identitiesOf(res *engram.AddObservationsResult) []string {
	var out []string
	for _, o := range res.Observations {
		if !slices.Contains(out, o.IdentityID) {
			out = append(out, o.IdentityID)
		}
	}
	return out
}

// testIdentities: observations of two people's faces and voices cluster
// into four identities; a width other than the modality's declared one is
// refused naming the field, storing nothing; a link of a face, a voice and
// a name stated by an episode makes a person; merge, split and unlink keep
// their history; another user sees none of it.
func testIdentities(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	r := rand.New(rand.NewPCG(7, 11))
	ep := mustAddEpisodes(t, e, nsA, "Wir sitzen am See.").Episodes[0].ID
	batch := append(append(noisy(r, "face", 16, 0, 6, []string{ep}), noisy(r, "face", 16, 1, 5, nil)...), append(noisy(r, "voice", 24, 0, 4, nil), noisy(r, "voice", 24, 1, 4, nil)...)...)
	res, err := e.AddObservations(ctx, engram.AddObservationsRequest{Namespace: nsA, Observations: batch})
	if err != nil {
		t.Fatal(err)
	}
	ids := identitiesOf(res)
	if len(ids) != 4 {
		t.Fatalf("two faces and two voices made %d identities: %v", len(ids), ids)
	}
	face1, face2, voice1 := res.Observations[0].IdentityID, res.Observations[6].IdentityID, res.Observations[11].IdentityID
	for i, o := range res.Observations {
		want := res.Observations[15].IdentityID
		switch {
		case i < 6:
			want = face1
		case i < 11:
			want = face2
		case i < 15:
			want = voice1
		}
		if o.IdentityID != want {
			t.Errorf("observation %d went to %s, want %s", i, o.IdentityID, want)
		}
	}

	// A voice of another width is refused, naming the field; nothing of
	// the batch is kept.
	bad := append(noisy(r, "face", 16, 2, 1, nil), noisy(r, "voice", 8, 2, 1, nil)...)
	_, err = e.AddObservations(ctx, engram.AddObservationsRequest{Namespace: nsA, Observations: bad})
	if code(err) != engram.EINVALID || !strings.Contains(err.Error(), "observations[1].embedding") {
		t.Errorf("a voice of 8 values after 24: %v, want invalid naming observations[1].embedding", err)
	}
	if d, err := e.GetIdentity(ctx, scA, face1); err != nil || len(d.Observations) != 6 || d.Identity.Count != 6 {
		t.Errorf("face1 after the refused batch: %+v, %v", d, err)
	} else if len(d.Episodes) != 1 || d.Episodes[0].ID != ep {
		t.Errorf("face1's episodes = %+v, want %s", d.Episodes, ep)
	}

	// Link a face, a voice and a name, stated by an episode.
	p, err := e.LinkIdentities(ctx, scA, engram.LinkRequest{Identities: []string{face1, voice1}, Name: "Alicia", Source: engram.PersonStated, EpisodeID: ep})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "Alicia" || len(p.Identities) != 2 || p.Source != engram.PersonStated || p.EpisodeID != ep {
		t.Errorf("linked person = %+v", p)
	}
	p2, err := e.LinkIdentities(ctx, scA, engram.LinkRequest{Name: "Ali", PersonID: p.ID})
	if err != nil || p2.ID != p.ID || !slices.Equal(p2.Aliases, []string{"Ali"}) {
		t.Errorf("alias link = %+v, %v", p2, err)
	}
	if _, err := e.LinkIdentities(ctx, scA, engram.LinkRequest{Identities: []string{engram.NewID()}}); code(err) != engram.ENOTFOUND || !strings.Contains(err.Error(), "identities[0]") {
		t.Errorf("link of an unknown identity: %v", err)
	}
	if _, err := e.LinkIdentities(ctx, scA, engram.LinkRequest{Name: "X", Source: engram.PersonStated}); code(err) != engram.EINVALID {
		t.Errorf("a stated link without its episode: %v", err)
	}

	// Merge face2 into face1, then split it off again.
	merged, err := e.MergeIdentities(ctx, scA, engram.IdentityMergeRequest{Into: face1, From: []string{face2}})
	if err != nil || merged.Count != 11 || merged.PersonID != p.ID {
		t.Fatalf("merge = %+v, %v", merged, err)
	}
	if _, err := e.MergeIdentities(ctx, scA, engram.IdentityMergeRequest{Into: face1, From: []string{voice1}}); code(err) != engram.EINVALID || !strings.Contains(err.Error(), "from[0]") {
		t.Errorf("merging a voice into a face: %v", err)
	}
	var back []string
	for _, o := range res.Observations[6:11] {
		back = append(back, o.ID)
	}
	split, err := e.SplitIdentity(ctx, scA, face1, engram.IdentitySplitRequest{Observations: back, Label: "stranger"})
	if err != nil || split.Count != 5 || split.PersonID != "" {
		t.Fatalf("split = %+v, %v", split, err)
	}
	if d, err := e.GetIdentity(ctx, scA, face1); err != nil || d.Identity.Count != 6 || len(d.Observations) != 6 {
		t.Errorf("face1 after the split: %+v, %v", d, err)
	}
	// The split-off identity is where its observations cluster again.
	again, err := e.AddObservations(ctx, engram.AddObservationsRequest{Namespace: nsA, Observations: []engram.ObservationInput{
		{Modality: "face", Embedding: res.Observations[7].Embedding}, {Modality: "face", Embedding: res.Observations[1].Embedding}}})
	if err != nil || again.Observations[0].IdentityID != split.ID || again.Observations[1].IdentityID != face1 {
		t.Errorf("after the split, observations cluster to %+v (%v), want %s and %s", again, err, split.ID, face1)
	}
	if _, err := e.UnlinkIdentity(ctx, scA, voice1); err != nil {
		t.Fatal(err)
	}
	var ops []string
	h, err := e.IdentityHistory(ctx, scA, face1)
	for _, ev := range h {
		ops = append(ops, ev.Op)
	}
	if err != nil || fmt.Sprint(ops) != "[create link merge split]" {
		t.Errorf("face1's history = %v, %v", ops, err)
	}
	ops = nil
	h, err = e.IdentityHistory(ctx, scA, p.ID)
	for _, ev := range h {
		ops = append(ops, ev.Op+":"+ev.Source)
	}
	if err != nil || fmt.Sprint(ops) != "[link:episode link:client merge:client unlink:client]" {
		t.Errorf("the person's history = %v, %v", ops, err)
	}
	if ps, err := e.ListPersons(ctx, scA); err != nil || len(ps) != 1 || ps[0].Source != engram.PersonStated || !slices.Equal(ps[0].Identities, []string{face1}) {
		t.Errorf("persons = %+v, %v; want the one stated by the episode, with face1 only", ps, err)
	}

	// Bob sees none of it.
	if _, err := e.GetIdentity(ctx, scB, face1); code(err) != engram.ENOTFOUND {
		t.Errorf("bob reads alice's identity: %v", err)
	}
	if ids, err := e.ListIdentities(ctx, scB, engram.IdentityFilter{}); err != nil || len(ids) != 0 {
		t.Errorf("bob lists %v, %v", ids, err)
	}
	if _, err := e.MergeIdentities(ctx, scB, engram.IdentityMergeRequest{Into: face1, From: []string{split.ID}}); code(err) != engram.ENOTFOUND {
		t.Errorf("bob merges alice's identities: %v", err)
	}
	if ps, err := e.ListPersons(ctx, scB); err != nil || len(ps) != 0 {
		t.Errorf("bob lists persons %v, %v", ps, err)
	}
}

// testIdentitySearch: a query naming a person by their name or any alias,
// in several languages, finds the memories of the episodes in which their
// face or voice was observed, which share no word with the query; before
// the link, and for another user, it does not.
func testIdentitySearch(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	r := rand.New(rand.NewPCG(3, 5))
	eps := mustAddEpisodes(t, e, nsA, "The kayak tipped over near the pier.", "Wir haben am Abend Pizza gegessen.", "今天下午一直在下雨。", "The printer is out of toner again.")
	seen := []string{eps.Episodes[0].ID, eps.Episodes[1].ID, eps.Episodes[2].ID}
	res, err := e.AddObservations(ctx, engram.AddObservationsRequest{Namespace: nsA, Observations: append(noisy(r, "face", 16, 0, 4, seen[:2]), noisy(r, "voice", 24, 0, 3, seen[1:])...)})
	if err != nil {
		t.Fatal(err)
	}
	ids := identitiesOf(res)
	found := func(s engram.Scope, q string) []string {
		t.Helper()
		res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 20, Channels: []string{retrieval.ChannelIdentity}})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range res.Hits {
			for _, src := range h.Memory.Sources {
				if !slices.Contains(out, src) {
					out = append(out, src)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	if got := found(scA, "What did Alicia Gómez do?"); len(got) != 0 {
		t.Fatalf("before any link the identity channel found episodes %v", got)
	}
	// A memory cued by her name makes an entity of the graph, which the
	// link names as the person's.
	if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{
		{Value: "Alicia Gómez fährt gern Kajak.", Cues: []string{"Alicia Gómez"}}}}); err != nil {
		t.Fatal(err)
	}
	ents, err := e.ListEntities(ctx, scA, engram.EntityFilter{Prefix: "alicia"})
	if err != nil || len(ents.Entities) == 0 {
		t.Fatalf("no entity for Alicia Gómez: %+v, %v", ents, err)
	}
	p, err := e.LinkIdentities(ctx, scA, engram.LinkRequest{Identities: ids, Name: "Alicia Gómez"})
	if err != nil {
		t.Fatal(err)
	}
	if p.EntityID != ents.Entities[0].ID {
		t.Errorf("the person's entity is %q, want %s (%s)", p.EntityID, ents.Entities[0].ID, ents.Entities[0].Name)
	}
	for _, alias := range []string{"Ali", "Licha", "爱丽丝"} {
		if _, err := e.LinkIdentities(ctx, scA, engram.LinkRequest{Identities: ids[:1], Name: alias}); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Clone(seen)
	slices.Sort(want)
	for _, q := range []string{"What did Alicia Gómez do?", "Was hat Ali gemacht?", "¿Qué hizo Licha ayer?", "爱丽丝", "alicia gomez"} {
		if got := found(scA, q); !slices.Equal(got, want) {
			t.Errorf("%q found the episodes %v, want %v", q, got, want)
		}
		if got := found(scB, q); len(got) != 0 {
			t.Errorf("bob's %q found alice's episodes %v", q, got)
		}
	}
	// The default search, all channels fused, has them too.
	all, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "Was hat Ali gemacht?", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Hits) < 3 {
		t.Errorf("the default search for an alias found %d hits, want the 3 observed episodes' memories", len(all.Hits))
	}
}
