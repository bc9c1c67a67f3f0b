package enginetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/vault"
)

// sensitiveCase is a turn holding one secret or personal datum: its kind,
// the group a policy treats it by, and the exact span.
type sensitiveCase struct {
	lang, text, span, kind, group string
}

// sensitiveCases cover every kind the detector finds, in English, German,
// Spanish, French and Chinese turns.
var sensitiveCases = []sensitiveCase{
	{"en", "my OpenAI key is sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z, keep it for the deploy", "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "api_key", engram.GroupSecret},
	{"en", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----", "private_key", engram.GroupSecret},
	{"de", "Das Passwort für den Router lautet: Sommer2024!", "Sommer2024!", "password", engram.GroupSecret},
	{"en", "connect with postgres://app:s3cr3t-P4ss@db.internal:5432/prod", "s3cr3t-P4ss", "connection_string", engram.GroupSecret},
	{"zh", "我的密码是 Tr0ub4dor&3，别告诉别人", "Tr0ub4dor&3", "password", engram.GroupSecret},
	{"es", "Mi tarjeta es 6011 0000 0000 0004 y caduca pronto", "6011 0000 0000 0004", "card", engram.GroupPayment},
	{"fr", "Virement sur FR14 2004 1010 0505 0001 3M02 606 avant lundi", "FR14 2004 1010 0505 0001 3M02 606", "iban", engram.GroupPayment},
	{"zh", "身份证号 11010519491231002X", "11010519491231002X", "national_id", engram.GroupID},
	{"es", "Mi DNI es 98765432M", "98765432M", "national_id", engram.GroupID},
	{"de", "Schreib mir an anna.schmidt+notes@example.de", "anna.schmidt+notes@example.de", "email", engram.GroupContact},
	{"fr", "appelle-moi au +33 6 12 34 56 78 ce soir", "+33 6 12 34 56 78", "phone", engram.GroupContact},
}

// testVault returns a vault with a fixed test master key.
func testVault(t *testing.T) *vault.Vault {
	t.Helper()
	v, err := vault.New([]byte(strings.Repeat("s", vault.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// textEmbedder is a BagEmbedder that keeps every text it embeds.
type textEmbedder struct {
	BagEmbedder
	mu    sync.Mutex
	texts []string
}

func (r *textEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.texts = append(r.texts, texts...)
	r.mu.Unlock()
	return r.BagEmbedder.Embed(ctx, texts)
}

// seen returns how many texts r was given so far.
func (r *textEmbedder) seen() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.texts)
}

// holding returns the texts r was given holding span, after the first
// from of them.
func (r *textEmbedder) holding(span string, from int) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.texts[from:] {
		if strings.Contains(s, span) {
			out = append(out, s)
		}
	}
	return out
}

// testSensitivePolicies: for every kind, language and treatment, through
// the library and over HTTP, an added turn is stored with the span as the
// policy says: kept as said, or replaced by its typed placeholder, and
// then neither the episode, the memories formed from it, a search for the
// span, an export, nor the embedder ever see it; under seal the span is
// in the vault, read back by asking for it; the add's answer and the
// audit say what was treated, never the value.
func testSensitivePolicies(t *testing.T, open Open) {
	for _, treat := range []engram.Treatment{engram.TreatSeal, engram.TreatRedact, engram.TreatKeep} {
		t.Run(string(treat), func(t *testing.T) {
			emb := &textEmbedder{}
			p, _ := engram.ParseSensitivePolicy(string(treat))
			e := newEngine(t, open, engine.Options{Vault: testVault(t), Sensitive: p, Embedder: emb, EmbedInline: true})
			client, _ := overHTTP(t, e)
			for i, c := range sensitiveCases {
				for _, v := range []via{{"library", e}, {"http", client}} {
					t.Run(fmt.Sprintf("%s/%s/%d/%s", c.kind, c.lang, i, v.name), func(t *testing.T) {
						ns := engram.Namespace{Org: "acme", Project: "p", User: fmt.Sprintf("u%d%s", i, v.name)}
						checkTreated(t, v.svc, emb, ns, c, treat)
					})
				}
			}
		})
	}
}

// checkTreated adds c's turn in ns through svc and checks that it was
// treated as treat says.
func checkTreated(t *testing.T, svc engram.Service, emb *textEmbedder, ns engram.Namespace, c sensitiveCase, treat engram.Treatment) {
	t.Helper()
	from := emb.seen()
	res, err := svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: c.text}}})
	if err != nil {
		t.Fatal(err)
	}
	// The write's own texts: the searches below embed their queries.
	if texts := emb.holding(c.span, from); treat != engram.TreatKeep && len(texts) > 0 {
		t.Errorf("the embedder was given the span in %q", texts)
	}
	s := engram.ScopeOf(ns)
	ph := fmt.Sprintf("[%s:%s#1]", c.group, c.kind)
	ep, err := svc.GetEpisode(ctx, s, res.Episodes[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if treat == engram.TreatKeep {
		if !strings.Contains(ep.Content, c.span) || res.Sensitive != nil {
			t.Fatalf("kept: episode %q, answer %+v; want the span as said and nothing treated", ep.Content, res.Sensitive)
		}
		if len(spanIn(t, svc, s, c.span)) == 0 {
			t.Fatalf("kept: a search and the memories of the scope do not hold %q: the checks below would be blind", c.span)
		}
		return
	}
	want := []engram.SensitiveCount{{Kind: c.kind, Treatment: treat, Count: 1}}
	if ep.Content != strings.Replace(c.text, c.span, ph, 1) || !slices.Equal(res.Sensitive, want) {
		t.Errorf("episode %q, answer %+v; want the span replaced by %s and %+v", ep.Content, res.Sensitive, ph, want)
	}
	if where := spanIn(t, svc, s, c.span); len(where) > 0 {
		t.Errorf("the span is still readable in %v", where)
	}
	checkAudit(t, svc, s, c)
	checkSealed(t, svc, s, ep.ID, c, ph, treat)
}

// spanIn returns where span can be read in scope s without the vault: the
// episodes and memories listed, the hits of a search for it, the export.
func spanIn(t *testing.T, svc engram.Service, s engram.Scope, span string) []string {
	t.Helper()
	var where []string
	eps, err := svc.ListEpisodes(ctx, s, engram.EpisodeFilter{Limit: engram.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps.Episodes {
		if b, _ := json.Marshal(ep); strings.Contains(string(b), jsonText(span)) {
			where = append(where, "episode "+ep.ID)
		}
	}
	ms, err := svc.ListMemories(ctx, s, engram.MemoryFilter{Limit: engram.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms.Memories {
		if b, _ := json.Marshal(m); strings.Contains(string(b), jsonText(span)) {
			where = append(where, "memory "+m.ID)
		}
	}
	sr, err := svc.Search(ctx, engram.SearchRequest{Scope: s, Query: span, K: 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range sr.Hits {
		if b, _ := json.Marshal(h); strings.Contains(string(b), jsonText(span)) {
			where = append(where, "search hit "+h.Memory.ID)
		}
	}
	err = svc.Export(ctx, s, func(r engram.Record) error {
		if b, _ := json.Marshal(r); strings.Contains(string(b), jsonText(span)) {
			where = append(where, "export record "+string(r.Type))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return where
}

// jsonText is s as it reads inside a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// checkAudit checks that scope s's audit says what was treated, and holds
// no value.
func checkAudit(t *testing.T, svc engram.Service, s engram.Scope, c sensitiveCase) {
	t.Helper()
	page, err := svc.Audit(ctx, s, engram.AuditFilter{Ops: []string{engine.AuditSensitive}})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || !strings.Contains(page.Entries[0].Detail, c.kind+" x1") {
		t.Fatalf("audit of the sensitive findings: %+v; want one entry naming %s x1", page.Entries, c.kind)
	}
	if b, _ := json.Marshal(page.Entries); strings.Contains(string(b), jsonText(c.span)) {
		t.Errorf("the audit entry holds the span: %s", b)
	}
}

// checkSealed checks the vault of scope s for episode id's span: there,
// read by asking for the vault, under seal; absent under redact.
func checkSealed(t *testing.T, svc engram.Service, s engram.Scope, id string, c sensitiveCase, ph string, treat engram.Treatment) {
	t.Helper()
	vctx := engram.WithVault(ctx, "test")
	page, err := svc.ListMemories(vctx, s, engram.MemoryFilter{Kinds: []engram.Kind{engram.KindVault}, Sources: []string{id}})
	if err != nil {
		t.Fatal(err)
	}
	if treat == engram.TreatRedact {
		if len(page.Memories) != 0 {
			t.Errorf("redact kept %d vault memories of the span", len(page.Memories))
		}
		return
	}
	if len(page.Memories) != 1 {
		t.Fatalf("vault memories of episode %s: %+v; want the one span", id, page.Memories)
	}
	m := page.Memories[0]
	if m.Value != c.span || m.Metadata[engine.MetaPlaceholder] != ph || m.Metadata[engine.MetaSealedFrom] != id {
		t.Errorf("sealed span %q with metadata %v; want %q as %s from %s", m.Value, m.Metadata, c.span, ph, id)
	}
}
