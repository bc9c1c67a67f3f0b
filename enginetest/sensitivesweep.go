package enginetest

import (
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testSensitiveScanTenant: a scan whose scope names no user sweeps the
// tenant: the records of no user and of every user (one who has only
// episodes too), reported by user and kind, the episodes' speakers
// included; a scan naming a user reports only that user's. With apply the
// sweep treats every user's records, speakers too, and a second sweep
// finds nothing. Another tenant's records are neither read nor treated.
// A write treats a speaker as it treats the content.
func testSensitiveScanTenant(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Vault: testVault(t)})
	tenant := engram.Namespace{Org: "acme", Project: "sweep"}
	keep, _ := engram.ParseSensitivePolicy("keep")
	for _, n := range []engram.Namespace{tenant, {Org: "acme", Project: "other"}} {
		if _, err := e.SetSensitivePolicy(ctx, n, keep); err != nil {
			t.Fatal(err)
		}
	}
	ann := engram.Namespace{Org: "acme", Project: "sweep", User: "ann"}
	bob := engram.Namespace{Org: "acme", Project: "sweep", User: "bob", Agent: "helper"}
	noForm := false
	add := func(ns engram.Namespace, speaker, content string) string {
		res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Form: &noForm, Episodes: []engram.EpisodeInput{{Role: "user", Speaker: speaker, Content: content}}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Episodes[0].ID
	}
	annEp := add(ann, "Ann", "Das Passwort für den Router lautet: Sommer2024!")
	bobEp := add(bob, testKey, "Je reviens lundi")
	shared := mustAddMemory(t, e, tenant, "IBAN de la empresa: "+testIBAN)
	other := add(engram.Namespace{Org: "acme", Project: "other", User: "ann"}, "Ann", "Mi tarjeta es "+testCard)

	rep, err := e.ScanSensitive(ctx, engram.ScopeOf(tenant), false)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	for _, f := range rep.Found {
		found[f.User+"/"+f.Kind] = f.Records
	}
	if rep.Users != 2 || !slices.Equal(found["ann/password"], []string{annEp}) || !slices.Equal(found["bob/api_key"], []string{bobEp}) ||
		!slices.Equal(found["/iban"], []string{shared.ID}) || len(found) != 3 {
		t.Fatalf("tenant sweep = %+v", rep)
	}
	if one, err := e.ScanSensitive(ctx, engram.ScopeOf(ann), false); err != nil || one.Users != 0 || len(one.Found) != 1 || one.Found[0].User != "ann" {
		t.Errorf("scan of ann = %+v, %v; want her password only", one, err)
	}
	if _, err := e.SetSensitivePolicy(ctx, tenant, engram.SensitivePolicy{}); err != nil {
		t.Fatal(err)
	}
	if rep, err = e.ScanSensitive(ctx, engram.ScopeOf(tenant), true); err != nil {
		t.Fatal(err)
	}
	if got := engram.SummarizeSensitive(rep.Treated); got != "sealed api_key x1; sealed iban x1; sealed password x1" {
		t.Errorf("the sweep with apply treated %q", got)
	}
	if ep, err := e.GetEpisode(ctx, engram.ScopeOf(bob), bobEp); err != nil || ep.Speaker != "[secret:api_key#1]" {
		t.Errorf("after the sweep bob's episode is %+v, %v; want its speaker sealed", ep, err)
	}
	if rep, err = e.ScanSensitive(ctx, engram.ScopeOf(tenant), false); err != nil || len(rep.Found) != 0 {
		t.Errorf("a second sweep = %+v, %v; want nothing", rep, err)
	}
	if ep, err := e.GetEpisode(ctx, engram.Scope{Org: "acme", Project: "other", User: "ann"}, other); err != nil || !strings.Contains(ep.Content, testCard) {
		t.Errorf("another tenant's episode became %+v, %v", ep, err)
	}
	id := add(engram.Namespace{Org: "acme", Project: "p", User: "speaker"}, "bot "+testKey, "Hola")
	if ep, err := e.GetEpisode(ctx, engram.Scope{Org: "acme", Project: "p", User: "speaker"}, id); err != nil || ep.Speaker != "bot [secret:api_key#1]" {
		t.Errorf("an episode said by a key is stored as %+v, %v", ep, err)
	}
}

// testSensitiveMedia: the caption, the transcript and the segments' texts
// and speakers of an episode's media are treated as its content is: the
// stored episode holds placeholders numbered after the content's, each
// span sealed under the episode with its path as the field, the caller's
// media left as given, and no read of the scope holding a span (the
// memories formed from the caption and the segments included).
func testSensitiveMedia(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Vault: testVault(t)})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "media"}
	s := engram.ScopeOf(ns)
	img := addResource(t, e, ns, "card.png", "image/png", pngBytes)
	voice := addResource(t, e, ns, "note.mp3", "audio/mpeg", mp3Bytes)
	caption := "Foto de la tarjeta " + testCard + " sobre la mesa"
	media := []engram.Media{
		{ResourceID: img.ID, Kind: engram.MediaImage, Caption: caption},
		{ResourceID: voice.ID, Kind: engram.MediaAudio, Transcript: "la clé API est " + testKeyFR, Segments: []engram.TranscriptSegment{
			{Start: 0, End: 3, Speaker: "Jonas", Text: "Das Passwort für den Router lautet: Sommer2024!"},
			{Start: 3, End: 6, Speaker: "李雷", Text: "IBAN: " + testIBAN},
		}},
	}
	res, err := addMediaEpisode(t, e, ns, media...)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Episodes[0].Media
	if len(got) != 2 || got[0].Caption != "Foto de la tarjeta [payment:card#1] sobre la mesa" || got[1].Transcript != "la clé API est [secret:api_key#2]" ||
		got[1].Segments[0].Text != "Das Passwort für den Router lautet: [secret:password#3]" || got[1].Segments[1].Text != "IBAN: [payment:iban#4]" {
		t.Errorf("stored media = %+v", got)
	}
	if media[0].Caption != caption {
		t.Errorf("the caller's caption became %q", media[0].Caption)
	}
	sealed := vaultOf(t, e, s, res.Episodes[0].ID)
	if len(sealed) != 4 || !slices.ContainsFunc(sealed, func(m engram.Memory) bool {
		return m.Value == "Sommer2024!" && m.Metadata[engine.MetaSealedField] == "media[1].segments[0].text"
	}) {
		t.Errorf("spans sealed from the media: %+v", sealed)
	}
	for _, span := range []string{testCard, testKeyFR, "Sommer2024!", testIBAN} {
		if where := spanIn(t, e, s, span); len(where) > 0 {
			t.Errorf("%q is still readable in %v", span, where)
		}
	}
}
