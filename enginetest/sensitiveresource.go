package enginetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testPEM is a private key as a document may quote it, over several lines.
const testPEM = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\nAAAAAAAAAAEAAAAzAAAAC3NzaC1lZDI1NTE5AAAAIG\n-----END OPENSSH PRIVATE KEY-----"

// sealedDoc is a Markdown document in German, Spanish, French and Chinese
// that holds a key (twice), a card, a private key and an email.
var sealedDoc = "# Betrieb\n\nDer API-Schlüssel lautet " + testKey + " und gilt bis Mai.\n\n" +
	"## Pagos\n\nLa tarjeta de la empresa es " + testCard + ", escribe a caja@example.com.\n\n" +
	"## Accès\n\nLa clé du serveur :\n\n" + testPEM + "\n\n## 密钥\n\n备用密钥还是 " + testKey + "。\n"

// testSensitiveResource: a text document uploaded under the default
// policy is stored with placeholders (the same key twice under one), its
// spans sealed under the resource with the field "content", the email
// kept; the download, its size and SHA-256 are of the treated text, the
// memories of its sections cite spans of it that hold their values, and
// the audit names the resource. Deleting the resource deletes its sealed
// spans. Under redact nothing is sealed; binary content is kept as sent.
func testSensitiveResource(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Vault: testVault(t), Embedder: &BagEmbedder{}})
	ns := engram.Namespace{Org: "acme", Project: "p", User: "docs"}
	s := engram.ScopeOf(ns)
	r := addResource(t, e, ns, "betrieb.md", "text/markdown", []byte(sealedDoc))
	stored := string(download(t, e, s, r.ID))
	want := strings.NewReplacer(testKey, "[secret:api_key#1]", testCard, "[payment:card#2]", testPEM, "[secret:private_key#3]").Replace(sealedDoc)
	if stored != want {
		t.Fatalf("stored content:\n%s\nwant:\n%s", stored, want)
	}
	sum := sha256.Sum256([]byte(stored))
	if r.Size != int64(len(stored)) || r.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("resource = %+v; want the size and SHA-256 of the stored text", r)
	}
	checkSectionCitations(t, e, s, r, stored)
	sealed := vaultOf(t, e, s, r.ID)
	var values []string
	for _, m := range sealed {
		values = append(values, m.Value)
		if m.Metadata[engine.MetaSealedField] != "content" || len(m.Sources) != 1 || m.Sources[0] != r.ID {
			t.Errorf("sealed span %+v: want field content and the resource as its source", m)
		}
	}
	if len(sealed) != 3 || !strings.Contains(strings.Join(values, "|"), testPEM) {
		t.Errorf("spans sealed from the document: %q; want the key, the card and the private key", values)
	}
	page, err := e.Audit(ctx, s, engram.AuditFilter{Ops: []string{engine.AuditSensitive}})
	if err != nil || len(page.Entries) != 1 || len(page.Entries[0].IDs) == 0 || page.Entries[0].IDs[0] != r.ID ||
		page.Entries[0].Detail != "sealed api_key x1; sealed card x1; sealed private_key x1" {
		t.Errorf("audit of the upload's findings: %+v, %v", page, err)
	}
	for _, span := range []string{testKey, testCard, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"} {
		if where := spanIn(t, e, s, span); len(where) > 0 {
			t.Errorf("%q is still readable in %v", span, where)
		}
	}
	if err := e.DeleteResource(ctx, s, r.ID); err != nil {
		t.Fatal(err)
	}
	if left := vaultOf(t, e, s, r.ID); len(left) != 0 {
		t.Errorf("after deleting the resource the vault holds %d of its spans", len(left))
	}
	checkResourceRedactAndBinary(t, e)
}

// checkSectionCitations checks that every memory of resource r cites a
// span of the stored text that holds its value, in bytes and characters.
func checkSectionCitations(t *testing.T, e *engine.Engine, s engram.Scope, r *engram.Resource, stored string) {
	t.Helper()
	page, err := e.ListMemories(ctx, s, engram.MemoryFilter{Metadata: map[string]any{engram.MetaResourceID: r.ID}})
	if err != nil || len(page.Memories) < 4 || len(page.Memories) != r.Memories {
		t.Fatalf("memories of the resource: %+v, %v; want its %d sections", page, err, r.Memories)
	}
	for _, m := range page.Memories {
		cite, _ := m.Metadata[engram.MetaResource].(map[string]any)
		start, end, cs, ce := num(cite["start"]), num(cite["end"]), num(cite["char_start"]), num(cite["char_end"])
		if end > len(stored) || stored[start:end] != m.Value {
			t.Errorf("memory %q cites bytes [%d,%d) of the stored text", m.Value, start, end)
			continue
		}
		if string([]rune(stored)[cs:ce]) != m.Value {
			t.Errorf("memory %q cites characters [%d,%d) of the stored text", m.Value, cs, ce)
		}
	}
}

// checkResourceRedactAndBinary: under a tenant's redact the placeholders
// are stored and nothing is sealed; content that is not text is stored as
// sent, under any policy.
func checkResourceRedactAndBinary(t *testing.T, e *engine.Engine) {
	t.Helper()
	redact, _ := engram.ParseSensitivePolicy("redact")
	if _, err := e.SetSensitivePolicy(ctx, engram.Namespace{Org: "acme", Project: "q"}, redact); err != nil {
		t.Fatal(err)
	}
	ns := engram.Namespace{Org: "acme", Project: "q", User: "docs"}
	s := engram.ScopeOf(ns)
	r := addResource(t, e, ns, "notes.txt", "text/plain; charset=utf-8", []byte("Mon mot de passe est « Lune#Bleue9 »\n"))
	if got := string(download(t, e, s, r.ID)); got != "Mon mot de passe est « [secret:password#1] »\n" {
		t.Errorf("under redact the stored text is %q", got)
	}
	if n := len(vaultOf(t, e, s, r.ID)); n != 0 {
		t.Errorf("under redact %d spans were sealed", n)
	}
	blob := []byte("\x00\x01key " + testKey + "\xff")
	b := addResource(t, e, ns, "blob.bin", "application/octet-stream", blob)
	if got := download(t, e, s, b.ID); !bytes.Equal(got, blob) {
		t.Errorf("binary content stored as %q, want as sent", got)
	}
}
