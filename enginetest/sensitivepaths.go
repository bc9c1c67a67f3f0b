package enginetest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/embedcache"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/llmformer"
	"github.com/engramhq/engram/openai"
	"github.com/engramhq/engram/openai/openaitest"
	"github.com/engramhq/engram/vector"
)

const (
	testKey  = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"
	testCard = "4111 1111 1111 1111"
)

// testSensitiveTenantPolicy: a tenant's setting overrides the server's
// default for its groups and only for that tenant; the zero setting
// returns it to the default; a bad treatment is EINVALID naming it and
// changes nothing.
func testSensitiveTenantPolicy(t *testing.T, open Open) {
	keep, _ := engram.ParseSensitivePolicy("keep")
	e := newEngine(t, open, engine.Options{Vault: testVault(t), Sensitive: keep})
	tenant := engram.Namespace{Org: "acme", Project: "p"}
	other := engram.Namespace{Org: "acme", Project: "q", User: "alice"}
	tp, err := e.SensitivePolicy(ctx, nsA)
	if err != nil || !tp.Set.IsZero() || tp.Applied != keep || tp.Org != "acme" || tp.Project != "p" {
		t.Fatalf("policy before any setting = %+v, %v; want nothing set and keep applied", tp, err)
	}
	turn := "my OpenAI key is " + testKey
	if c := mustAddEpisodes(t, e, nsA, turn).Episodes[0].Content; c != turn {
		t.Fatalf("under keep the turn was stored as %q", c)
	}
	set := engram.SensitivePolicy{Secret: engram.TreatSeal}
	if tp, err = e.SetSensitivePolicy(ctx, tenant, set); err != nil || tp.Applied.Secret != engram.TreatSeal || tp.Applied.Payment != engram.TreatKeep {
		t.Fatalf("set secret=seal = %+v, %v", tp, err)
	}
	res := mustAddEpisodes(t, e, nsA, turn+" and my card is "+testCard)
	if c := res.Episodes[0].Content; c != "my OpenAI key is [secret:api_key#1] and my card is "+testCard {
		t.Errorf("after secret=seal the turn was stored as %q", c)
	}
	if c := mustAddEpisodes(t, e, other, turn).Episodes[0].Content; c != turn {
		t.Errorf("another tenant's turn was stored as %q: the setting leaked", c)
	}
	if _, err := e.SetSensitivePolicy(ctx, tenant, engram.SensitivePolicy{Contact: "hide"}); code(err) != engram.EINVALID || !strings.Contains(err.Error(), "contact") {
		t.Errorf("set contact=hide: %v, want EINVALID naming contact", err)
	}
	if tp, err = e.SensitivePolicy(ctx, tenant); err != nil || tp.Set != set {
		t.Errorf("after a refused setting the policy is %+v, %v", tp, err)
	}
	if _, err := e.SetSensitivePolicy(ctx, tenant, engram.SensitivePolicy{}); err != nil {
		t.Fatal(err)
	}
	if c := mustAddEpisodes(t, e, nsA, turn).Episodes[0].Content; c != turn {
		t.Errorf("back on the default the turn was stored as %q", c)
	}
	page, err := e.Audit(ctx, engram.ScopeOf(tenant), engram.AuditFilter{Ops: []string{"sensitive.policy"}})
	if err != nil || len(page.Entries) != 2 {
		t.Errorf("audit of the policy changes: %+v, %v; want the two accepted", page, err)
	}
}

// testSensitiveNoVault: on an engine without a vault, seal is done as
// redact, and the answer says so (requested seal), through the library
// and over HTTP; nothing holds the span.
func testSensitiveNoVault(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	client, _ := overHTTP(t, e)
	for _, v := range []via{{"library", e}, {"http", client}} {
		ns := engram.Namespace{Org: "acme", Project: "p", User: "novault-" + v.name}
		res, err := v.svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Content: "Mi tarjeta es " + testCard}}})
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		want := []engram.SensitiveCount{{Kind: "card", Treatment: engram.TreatRedact, Count: 1, Requested: engram.TreatSeal}}
		if c := res.Episodes[0].Content; c != "Mi tarjeta es [payment:card#1]" || !slices.Equal(res.Sensitive, want) {
			t.Errorf("%s: stored %q, answered %+v; want redacted and %+v", v.name, c, res.Sensitive, want)
		}
		if where := spanIn(t, v.svc, engram.ScopeOf(ns), testCard); len(where) > 0 {
			t.Errorf("%s: the card is still readable in %v", v.name, where)
		}
	}
}

// testSensitiveWritePaths: memories added directly, updates, supersedes
// and imports are treated as episodes are, through the library and over
// HTTP; a sealed memory's span is in the vault under the memory's id.
func testSensitiveWritePaths(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Vault: testVault(t)})
	client, _ := overHTTP(t, e)
	for _, v := range []via{{"library", e}, {"http", client}} {
		t.Run(v.name, func(t *testing.T) {
			ns := engram.Namespace{Org: "acme", Project: "p", User: "paths-" + v.name}
			s := engram.ScopeOf(ns)
			ms, err := v.svc.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{
				Value: "Ana paga con la tarjeta " + testCard, Abstraction: "la tarjeta " + testCard, Cues: []string{"tarjeta"},
			}}})
			if err != nil {
				t.Fatal(err)
			}
			m := ms[0]
			if m.Value != "Ana paga con la tarjeta [payment:card#1]" || m.Abstraction != "la tarjeta [payment:card#1]" {
				t.Errorf("memory stored as %q / %q", m.Value, m.Abstraction)
			}
			sealed := vaultOf(t, v.svc, s, m.ID)
			if len(sealed) != 1 || sealed[0].Value != testCard || sealed[0].Metadata[engine.MetaSealedFrom] != m.ID {
				t.Errorf("vault memories of the memory: %+v", sealed)
			}
			pw := "Das Passwort ist Sommer2024!"
			if _, err := v.svc.UpdateMemory(ctx, s, m.ID, engram.MemoryPatch{Value: &pw}); err != nil {
				t.Fatal(err)
			}
			sup, err := v.svc.SupersedeMemory(ctx, s, m.ID, engram.SupersedeRequest{New: engram.Memory{Value: "le mot de passe est « Lune#Bleue9 »"}})
			if err != nil {
				t.Fatal(err)
			}
			if sup.New.Value != "le mot de passe est « [secret:password#1] »" {
				t.Errorf("supersede stored %q", sup.New.Value)
			}
			for _, span := range []string{testCard, "Sommer2024!", "Lune#Bleue9"} {
				if where := spanIn(t, v.svc, s, span); len(where) > 0 {
					t.Errorf("%q is still readable in %v", span, where)
				}
				hs, err := v.svc.History(ctx, s, m.ID)
				if b, _ := json.Marshal(hs); err != nil || strings.Contains(string(b), jsonText(span)) {
					t.Errorf("history holds %q (%v)", span, err)
				}
			}
		})
	}
	checkImportTreated(t, e, client)
}

// checkImportTreated imports an episode holding an IBAN through the
// library and over HTTP: it is stored with the placeholder, the answer
// counts it, and the span is sealed under the episode.
func checkImportTreated(t *testing.T, e *engine.Engine, client engram.Service) {
	for _, v := range []via{{"library", e}, {"http", client}} {
		ns := engram.Namespace{Org: "acme", Project: "p", User: "import-" + v.name}
		ep := &engram.Episode{ID: engram.NewID(), Namespace: ns, Content: "IBAN: DE89 3704 0044 0532 0130 00", Modality: engram.ModalityText, OccurredAt: t0, ReceivedAt: t0}
		res, err := v.svc.Import(ctx, engram.ScopeOf(ns), []engram.Record{{Type: engram.RecordEpisode, Episode: ep}})
		if err != nil {
			t.Fatalf("%s: import: %v", v.name, err)
		}
		want := []engram.SensitiveCount{{Kind: "iban", Treatment: engram.TreatSeal, Count: 1}}
		if !slices.Equal(res.Sensitive, want) {
			t.Errorf("%s: import answered %+v, want %+v", v.name, res.Sensitive, want)
		}
		got, err := v.svc.GetEpisode(ctx, engram.ScopeOf(ns), ep.ID)
		if err != nil || got.Content != "IBAN: [payment:iban#1]" {
			t.Errorf("%s: imported episode %+v, %v", v.name, got, err)
		}
		vs := vaultOf(t, v.svc, engram.ScopeOf(ns), ep.ID)
		if len(vs) != 1 || vs[0].Value != "DE89 3704 0044 0532 0130 00" {
			t.Errorf("%s: vault memories of the imported episode: %+v", v.name, vs)
		}
		if _, err := v.svc.Import(ctx, engram.ScopeOf(ns), []engram.Record{{Type: engram.RecordEpisode, Episode: ep}}); err != nil {
			t.Fatalf("%s: import again: %v", v.name, err)
		}
		if vs := vaultOf(t, v.svc, engram.ScopeOf(ns), ep.ID); len(vs) != 1 {
			t.Errorf("%s: after importing the episode again the vault holds %d spans of it, want 1", v.name, len(vs))
		}
	}
}

// vaultOf returns the vault memories sealed from record id in scope s,
// oldest first.
func vaultOf(t *testing.T, svc engram.Service, s engram.Scope, id string) []engram.Memory {
	t.Helper()
	page, err := svc.ListMemories(engram.WithVault(ctx, "test"), s, engram.MemoryFilter{Kinds: []engram.Kind{engram.KindVault}, Limit: engram.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var out []engram.Memory
	for _, m := range page.Memories {
		if m.Metadata[engine.MetaSealedFrom] == id {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b engram.Memory) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// testSensitiveLLMPrompt: the LLM former is given the placeholder, never
// the span, and what it makes of the turn holds none either.
func testSensitiveLLMPrompt(t *testing.T, open Open) {
	fake := openaitest.NewServer(t, openaitest.Options{StructuredOutputs: true})
	chat, err := openai.NewChat(openai.Config{BaseURL: fake.URL(), Model: "m1", RetryBase: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	f, err := llmformer.New(llmformer.Config{LLM: chat, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, open, engine.Options{Former: f, Vault: testVault(t)})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	fake.QueueChat(llmFact("semantic", "Alice keeps an OpenAI key", ""))
	at := t0
	_, err = e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: "my OpenAI key is " + testKey, OccurredAt: &at}}})
	if err != nil {
		t.Fatal(err)
	}
	reqs := fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("the former asked the model nothing: the check would be blind")
	}
	for i, r := range reqs {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), testKey) || !strings.Contains(string(b), jsonText("[secret:api_key#1]")) {
			t.Errorf("request %d to the model holds the key or lacks the placeholder: %s", i, b)
		}
	}
}

// RunSensitiveResidue seals secrets of several groups, said and in an
// uploaded document, into a store with a vault, an embedding cache and
// saved indexes (vector and text), and
// scans every file of the store (files) and of the cache directory for
// the spans' bytes: none may be found, since a span is encrypted before
// anything is stored, embedded or indexed. An email address the policy
// keeps must be found, so the scan is not blind.
func RunSensitiveResidue(t *testing.T, st engram.Store, files Files) {
	cacheDir := t.TempDir()
	cache, err := embedcache.New(&BagEmbedder{}, embedcache.Options{Path: filepath.Join(cacheDir, "embeddings-cache.db")})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, st, engine.Options{
		Embedder: cache, IndexDir: filepath.Join(cacheDir, "ann"), Vault: testVault(t), EmbedInline: true,
		NewIndex: func(dim int) vector.Index { return vector.NewAuto(dim, vector.AutoConfig{Threshold: 1}) },
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); cache.Close(); st.Close() })
	ms := distinctMarkers(t, 3)
	key, pw, card, kept := "sk-proj-"+ms[0], "Pw"+ms[1]+"7!", luhnCard(t), ms[2]+"@example.com"
	ns := engram.Namespace{Org: "acme", Project: "p", User: "alice"}
	for _, text := range []string{"my OpenAI key is " + key, "Das Passwort ist " + pw, "Mi tarjeta es " + card, "write to " + kept} {
		if _, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Content: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{Value: "the deploy key is " + key, Cues: []string{ms[1]}}}}); err != nil {
		t.Fatal(err)
	}
	doc := "# Zugang\n\nDer Schlüssel: " + key + "\n\nLa tarjeta: " + card + "\n"
	if _, err := e.AddResource(ctx, engram.Resource{Namespace: ns, Name: "zugang.md", MIMEType: "text/markdown"}, strings.NewReader(doc)); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{"dense", "bm25"} {
		if _, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "key tarjeta", Channels: []string{ch}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.SaveIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(vaultOf(t, e, engram.ScopeOf(ns), "")); n != 0 {
		t.Fatalf("%d sealed spans name no record", n)
	}
	page, err := e.ListMemories(engram.WithVault(ctx, "test"), engram.ScopeOf(ns), engram.MemoryFilter{Kinds: []engram.Kind{engram.KindVault}})
	if err != nil || len(page.Memories) != 6 {
		t.Fatalf("the vault holds %d spans (%v), want the 6 sealed (4 said, 2 uploaded)", len(page.Memories), err)
	}
	scan := append(files(t), DirFiles(t, cacheDir)...)
	if len(grep(t, scan, ms[2])) == 0 || len(grep(t, scan, ms[1])) == 0 {
		t.Fatal("the kept email or the cue is in no file: the scan is blind")
	}
	for _, span := range []string{key, pw, card, "sk-proj-" + ms[0][:12], ms[0]} {
		if hits := grepAny(t, scan, [][]byte{[]byte(span)}); len(hits) > 0 {
			t.Errorf("the sealed %q is in %v", span, hits)
		}
	}
}

// luhnCard returns a random Visa number that passes the Luhn check,
// grouped in fours.
func luhnCard(t *testing.T) string {
	t.Helper()
	b := make([]byte, 14)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	d := []int{4}
	for _, x := range b {
		d = append(d, int(x%10))
	}
	sum := 0
	for i := len(d) - 1; i >= 0; i-- { // the check digit goes after d
		v := d[i]
		if (len(d)-i)%2 == 1 {
			v *= 2
			if v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	d = append(d, (10-sum%10)%10)
	var sb strings.Builder
	for i, x := range d {
		if i > 0 && i%4 == 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%d", x)
	}
	return sb.String()
}

// testSensitiveScan: records stored while the tenant kept its findings are
// reported by a scan (kinds, counts, record ids, no value), and with apply
// treated as a write would have: episodes, the memories formed from them
// and the memories with their versions rewritten with placeholders (a key
// found in the value also where formation repeated it bare, as a cue),
// the spans of current texts sealed (those only in a version, the card
// here, redacted), the new texts embedded, and a search for a span
// finding nothing. A second scan finds only what the
// policy keeps.
func testSensitiveScan(t *testing.T, open Open) {
	emb := &textEmbedder{}
	e := newEngine(t, open, engine.Options{Vault: testVault(t), Embedder: emb, EmbedInline: true})
	tenant := engram.Namespace{Org: "acme", Project: "p"}
	keep, _ := engram.ParseSensitivePolicy("keep")
	if _, err := e.SetSensitivePolicy(ctx, tenant, keep); err != nil {
		t.Fatal(err)
	}
	ns := engram.Namespace{Org: "acme", Project: "p", User: "scan"}
	s := engram.ScopeOf(ns)
	eps := mustAddEpisodes(t, e, ns, "Mein Passwort ist Sommer2024!", "我的密码是 Tr0ub4dor&3，别告诉别人", "write to anna.schmidt+notes@example.de")
	m := mustAddMemory(t, e, ns, "Ana paga con la tarjeta "+testCard)
	v := "la clé API est Zk4Lm9Qp2Rs7Tv1Wx6Yz3Ab8Cd5Ef0Gh"
	if _, err := e.UpdateMemory(ctx, s, m.ID, engram.MemoryPatch{Value: &v}); err != nil {
		t.Fatal(err)
	}
	rep, err := e.ScanSensitive(ctx, s, false)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]engram.SensitiveFound{}
	for _, f := range rep.Found {
		kinds[f.Kind] = f
	}
	if !slices.Contains(kinds["password"].Records, eps.Episodes[0].ID) || !slices.Contains(kinds["card"].Records, m.ID) ||
		!slices.Contains(kinds["api_key"].Records, m.ID) || kinds["email"].Count == 0 || rep.Treated != nil {
		t.Fatalf("scan without apply = %+v", rep)
	}
	spans := []string{"Sommer2024!", "Tr0ub4dor&3", testCard, "Zk4Lm9Qp2Rs7Tv1Wx6Yz3Ab8Cd5Ef0Gh"}
	if b, _ := json.Marshal(rep); slices.ContainsFunc(spans, func(sp string) bool { return strings.Contains(string(b), jsonText(sp)) }) {
		t.Fatalf("the report holds a value: %s", b)
	}
	if _, err := e.SetSensitivePolicy(ctx, tenant, engram.SensitivePolicy{}); err != nil {
		t.Fatal(err)
	}
	if rep, err = e.ScanSensitive(ctx, s, true); err != nil {
		t.Fatal(err)
	}
	if engram.SummarizeSensitive(rep.Treated) != "sealed api_key x1; sealed password x4" {
		t.Errorf("scan with apply treated %q", engram.SummarizeSensitive(rep.Treated))
	}
	for _, sp := range spans {
		if where := spanIn(t, e, s, sp); len(where) > 0 {
			t.Errorf("after the scan %q is still readable in %v", sp, where)
		}
		hs, err := e.History(ctx, s, m.ID)
		if b, _ := json.Marshal(hs); err != nil || strings.Contains(string(b), jsonText(sp)) {
			t.Errorf("after the scan the history holds %q (%v)", sp, err)
		}
	}
	if got, err := e.GetMemory(ctx, s, m.ID); err != nil || got.Value != "la clé API est [secret:api_key#1]" || len(emb.holding("[secret:api_key#1]", 0)) == 0 {
		t.Errorf("after the scan the memory is %+v (%v), embedded anew: %v", got, err, emb.holding("[secret:api_key#1]", 0))
	}
	if vs := vaultOf(t, e, s, eps.Episodes[1].ID); len(vs) != 1 || vs[0].Value != "Tr0ub4dor&3" {
		t.Errorf("the sealed span of the Chinese turn: %+v", vs)
	}
	if rep, err = e.ScanSensitive(ctx, s, true); err != nil || len(rep.Found) != 1 || rep.Found[0].Kind != "email" || rep.Treated != nil {
		t.Errorf("a second scan = %+v, %v; want only the kept email", rep, err)
	}
}
