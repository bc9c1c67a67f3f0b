package enginetest

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/internal/syncbuf"
)

const (
	testKeyFR = "Zk4Lm9Qp2Rs7Tv1Wx6Yz3Ab8Cd5Ef0Gh"
	testIBAN  = "DE89 3704 0044 0532 0130 00"
)

// testSensitiveMetadata: the string values of an episode's and a memory's
// metadata, at any depth, are treated as their texts are, through the
// library and over HTTP: stored with placeholders numbered after the
// content's, in order of sorted keys, the spans sealed under the record
// with the metadata path as their field, the answer counting them, the
// caller's map left as given, and no read of the scope holding a span. An
// update's new metadata is treated too.
func testSensitiveMetadata(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Vault: testVault(t)})
	client, _ := overHTTP(t, e)
	for _, v := range []via{{"library", e}, {"http", client}} {
		t.Run(v.name, func(t *testing.T) {
			ns := engram.Namespace{Org: "acme", Project: "p", User: "meta-" + v.name}
			s := engram.ScopeOf(ns)
			note := "la clé API est " + testKeyFR
			meta := map[string]any{"note": note, "n": 3, "form": map[string]any{"iban": "IBAN: " + testIBAN, "tags": []any{"Mi tarjeta es " + testCard, "ok"}}}
			res, err := v.svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Content: "Formular gespeichert", Metadata: meta}}})
			if err != nil {
				t.Fatal(err)
			}
			ep := res.Episodes[0]
			form, _ := ep.Metadata["form"].(map[string]any)
			tags, _ := form["tags"].([]any)
			if ep.Metadata["note"] != "la clé API est [secret:api_key#3]" || form["iban"] != "IBAN: [payment:iban#1]" || len(tags) != 2 || tags[0] != "Mi tarjeta es [payment:card#2]" || tags[1] != "ok" {
				t.Errorf("episode metadata stored as %#v", ep.Metadata)
			}
			if got := engram.SummarizeSensitive(res.Sensitive); got != "sealed api_key x1; sealed card x1; sealed iban x1" {
				t.Errorf("the add answered %q", got)
			}
			if meta["note"] != note {
				t.Errorf("the caller's metadata became %#v", meta)
			}
			sealed := vaultOf(t, v.svc, s, ep.ID)
			if !slices.ContainsFunc(sealed, func(m engram.Memory) bool {
				return m.Value == testKeyFR && m.Metadata[engine.MetaSealedField] == "metadata.note"
			}) || len(sealed) != 3 {
				t.Errorf("vault memories of the episode: %+v", sealed)
			}
			ms, err := v.svc.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{
				Value: "Anna's router", Metadata: map[string]any{"pw": "Das Passwort für den Router lautet: Sommer2024!"},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			if got := ms[0].Metadata["pw"]; got != "Das Passwort für den Router lautet: [secret:password#1]" {
				t.Errorf("memory metadata stored as %#v", ms[0].Metadata)
			}
			patch := map[string]any{"fr": "le mot de passe est « Lune#Bleue9 »"}
			up, err := v.svc.UpdateMemory(ctx, s, ms[0].ID, engram.MemoryPatch{Metadata: patch})
			if err != nil {
				t.Fatal(err)
			}
			if got := up.Metadata["fr"]; got != "le mot de passe est « [secret:password#1] »" {
				t.Errorf("updated metadata stored as %#v", up.Metadata)
			}
			for _, span := range []string{testKeyFR, testIBAN, testCard, "Sommer2024!", "Lune#Bleue9"} {
				if where := spanIn(t, v.svc, s, span); len(where) > 0 {
					t.Errorf("%q is still readable in %v", span, where)
				}
			}
		})
	}
}

// testSensitiveMetadataScan: metadata stored while the tenant kept its
// findings is reported by a scan under the record's id, and treated by a
// scan with apply once the policy seals: the episode's and the memory's
// metadata then hold placeholders, the spans are in the vault, and a
// second scan finds nothing.
func testSensitiveMetadataScan(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Vault: testVault(t)})
	tenant := engram.Namespace{Org: "acme", Project: "p"}
	keep, _ := engram.ParseSensitivePolicy("keep")
	if _, err := e.SetSensitivePolicy(ctx, tenant, keep); err != nil {
		t.Fatal(err)
	}
	ns := engram.Namespace{Org: "acme", Project: "p", User: "metascan"}
	s := engram.ScopeOf(ns)
	noForm := false
	res, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Form: &noForm, Episodes: []engram.EpisodeInput{{
		Content: "Router eingerichtet", Metadata: map[string]any{"note": "Mein Passwort ist Sommer2024!"},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	ep := res.Episodes[0]
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{
		Value: "Ana pagó la cena", Metadata: map[string]any{"pago": []any{"Mi tarjeta es 6011 0000 0000 0004"}},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	rep, err := e.ScanSensitive(ctx, s, false)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	for _, f := range rep.Found {
		found[f.Kind] = f.Records
	}
	if !slices.Contains(found["password"], ep.ID) || !slices.Contains(found["card"], m.ID) {
		t.Fatalf("scan without apply = %+v", rep)
	}
	if _, err := e.SetSensitivePolicy(ctx, tenant, engram.SensitivePolicy{}); err != nil {
		t.Fatal(err)
	}
	if rep, err = e.ScanSensitive(ctx, s, true); err != nil {
		t.Fatal(err)
	}
	if got := engram.SummarizeSensitive(rep.Treated); got != "sealed card x1; sealed password x1" {
		t.Errorf("scan with apply treated %q", got)
	}
	if got, err := e.GetEpisode(ctx, s, ep.ID); err != nil || got.Metadata["note"] != "Mein Passwort ist [secret:password#1]" {
		t.Errorf("after the scan the episode is %+v (%v)", got, err)
	}
	got, err := e.GetMemory(ctx, s, m.ID)
	if pago, _ := got.Metadata["pago"].([]any); err != nil || len(pago) != 1 || pago[0] != "Mi tarjeta es [payment:card#1]" {
		t.Errorf("after the scan the memory's metadata is %#v (%v)", got.Metadata, err)
	}
	if vs := vaultOf(t, e, s, m.ID); len(vs) != 1 || vs[0].Value != "6011 0000 0000 0004" || vs[0].Metadata[engine.MetaSealedField] != "metadata.pago[0]" {
		t.Errorf("the sealed span of the memory's metadata: %+v", vs)
	}
	for _, span := range []string{"Sommer2024!", "6011 0000 0000 0004"} {
		if where := spanIn(t, e, s, span); len(where) > 0 {
			t.Errorf("after the scan %q is still readable in %v", span, where)
		}
	}
	if rep, err = e.ScanSensitive(ctx, s, false); err != nil || len(rep.Found) != 0 {
		t.Errorf("a second scan = %+v, %v; want nothing", rep, err)
	}
}

// testSensitiveLogs: the engine's log, as text at debug level, never holds
// a span, while it does log the writes (here the warning that a seal was
// done as redact, naming the kind): episodes, memories, updates and a
// scan with apply, in German, Spanish and Chinese.
func testSensitiveLogs(t *testing.T, open Open) {
	var buf syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := newEngine(t, open, engine.Options{Logger: log})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "logs"}
	s := engram.ScopeOf(ns)
	mustAddEpisodes(t, e, ns, "Das Passwort für den Router lautet: Sommer2024!", "我的密码是 Tr0ub4dor&3，别告诉别人")
	m := mustAddMemory(t, e, ns, "Mi tarjeta es "+testCard)
	v := "IBAN: " + testIBAN
	if _, err := e.UpdateMemory(ctx, s, m.ID, engram.MemoryPatch{Value: &v, Metadata: map[string]any{"k": "la clé API est " + testKeyFR}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.ScanSensitive(ctx, s, true); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "kind=card") || !strings.Contains(out, "kind=password") {
		t.Fatalf("the log misses the writes' warnings: the check would be blind\n%s", out)
	}
	for _, span := range []string{"Sommer2024!", "Tr0ub4dor&3", testCard, testIBAN, testKeyFR} {
		if strings.Contains(out, span) {
			t.Errorf("the engine's log holds %q", span)
		}
	}
}

// testSensitiveMetadataGrows: metadata under the size limit as sent that
// placeholders take past it (an email is shorter than its placeholder) is
// refused with EINVALID naming the record and its metadata, through the
// library and over HTTP, on an episode, a memory, an update and an
// import; nothing of the write is stored, not its sealed spans either.
func testSensitiveMetadataGrows(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Vault: testVault(t)})
	seal, _ := engram.ParseSensitivePolicy("seal")
	if _, err := e.SetSensitivePolicy(ctx, engram.Namespace{Org: "acme", Project: "p"}, seal); err != nil {
		t.Fatal(err)
	}
	client, _ := overHTTP(t, e)
	var b strings.Builder
	for i := 0; b.Len() < engram.MaxMetadataBytes-200; i++ {
		fmt.Fprintf(&b, "u%d@ab.de ", i)
	}
	big := map[string]any{"contacts": b.String()}
	for _, v := range []via{{"library", e}, {"http", client}} {
		t.Run(v.name, func(t *testing.T) {
			ns := engram.Namespace{Org: "acme", Project: "p", User: "grow-" + v.name}
			s := engram.ScopeOf(ns)
			m := mustAddMemory(t, e, ns, "Anna sammelt Adressen")
			refused := func(what string, err error) {
				t.Helper()
				if code(err) != engram.EINVALID || !strings.Contains(err.Error(), "metadata") || !strings.Contains(err.Error(), "placeholders") {
					t.Errorf("%s: %v; want EINVALID naming the metadata grown by placeholders", what, err)
				}
			}
			_, err := v.svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Content: "Liste der Kontakte", Metadata: big}}})
			refused("episode", err)
			_, err = v.svc.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "Lista de contactos", Metadata: big}}})
			refused("memory", err)
			_, err = v.svc.UpdateMemory(ctx, s, m.ID, engram.MemoryPatch{Metadata: big})
			refused("update", err)
			ep := &engram.Episode{ID: engram.NewID(), Namespace: ns, Content: "liste des contacts", Metadata: big, Modality: engram.ModalityText, OccurredAt: t0, ReceivedAt: t0}
			_, err = v.svc.Import(ctx, s, []engram.Record{{Type: engram.RecordEpisode, Episode: ep}})
			refused("import", err)
			eps, err := v.svc.ListEpisodes(ctx, s, engram.EpisodeFilter{})
			if err != nil || len(eps.Episodes) != 0 {
				t.Errorf("episodes after the refusals: %+v, %v; want none", eps, err)
			}
			page, err := v.svc.ListMemories(engram.WithVault(ctx, "test"), s, engram.MemoryFilter{Statuses: []engram.Status{engram.StatusActive, engram.StatusSuperseded}, Limit: engram.MaxLimit})
			if err != nil || len(page.Memories) != 1 || page.Memories[0].ID != m.ID || page.Memories[0].Version != 1 {
				t.Errorf("memories after the refusals: %+v, %v; want only the first, unchanged", page, err)
			}
		})
	}
}
