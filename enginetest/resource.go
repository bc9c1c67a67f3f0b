package enginetest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-pdf/fpdf"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// handbook is a Markdown document in German and Chinese.
const handbook = "# Handbuch\n\nDie Einleitung erklärt den Leuchtturm.\n\n## Wartung\n\nDer Wärter ölt die Zahnräder jeden Donnerstag.\n\n## 维护\n\n灯塔看守人每周四给齿轮上油。\n"

func addResource(t *testing.T, e *engine.Engine, ns engram.Namespace, name, mimeType string, body []byte) *engram.Resource {
	t.Helper()
	r, err := e.AddResource(ctx, engram.Resource{Namespace: ns, Name: name, MIMEType: mimeType, Source: "test"}, bytes.NewReader(body))
	if err != nil {
		t.Fatalf("AddResource %s: %v", name, err)
	}
	return r
}

func download(t *testing.T, e *engine.Engine, s engram.Scope, id string) []byte {
	t.Helper()
	_, rc, err := e.OpenResource(ctx, s, id)
	if err != nil {
		t.Fatalf("OpenResource: %v", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read resource: %v", err)
	}
	return b
}

// testResourceLifecycle: a Markdown document is stored with its SHA-256,
// split into memories of kind resource that search finds by full text
// (German and Chinese) and by the dense channel, each citing the resource
// and a span that holds its text; a binary file of several chunks
// downloads byte-identical; deleting the resource removes its content and
// its memories.
func testResourceLifecycle(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{Embedder: &BagEmbedder{}})
	nsA := engram.Namespace{Org: "reslife", Project: "p", User: "alice"}
	scA := engram.ScopeOf(nsA)
	doc := addResource(t, e, nsA, "handbuch.md", "text/markdown", []byte(handbook))
	sum := sha256.Sum256([]byte(handbook))
	if doc.SHA256 != hex.EncodeToString(sum[:]) || doc.Size != int64(len(handbook)) || doc.Memories != 3 {
		t.Fatalf("resource = %+v", doc)
	}
	for _, c := range []struct{ query, channel, want string }{
		{"Zahnräder Donnerstag", "bm25", "Der Wärter ölt die Zahnräder jeden Donnerstag."},
		{"齿轮上油", "bm25", "灯塔看守人每周四给齿轮上油。"},
		{"Wärter ölt Zahnräder", "dense", "Der Wärter ölt die Zahnräder jeden Donnerstag."},
	} {
		res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: c.query, Channels: []string{c.channel}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) == 0 || res.Hits[0].Memory.Value != c.want {
			t.Fatalf("%s search %q: %+v, want %q first", c.channel, c.query, res.Hits, c.want)
		}
		checkCitation(t, res.Hits[0].Memory, doc.ID, handbook)
	}

	blob := make([]byte, 2*engram.ResourceChunkBytes+123)
	for i := range blob {
		blob[i] = byte(i*7 + i/1000)
	}
	bin := addResource(t, e, nsA, "blob.bin", "application/octet-stream", blob)
	if got := download(t, e, scA, bin.ID); !bytes.Equal(got, blob) || bin.Memories != 0 {
		t.Fatalf("download: %d bytes (equal: %v), %d memories", len(got), bytes.Equal(got, blob), bin.Memories)
	}
	page, err := e.ListResources(ctx, scA, engram.ResourceFilter{})
	if err != nil || len(page.Resources) != 2 || page.Resources[0].ID != bin.ID {
		t.Fatalf("list: %+v %v", page, err)
	}

	if err := e.DeleteResource(ctx, scA, doc.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GetResource(ctx, scA, doc.ID); code(err) != engram.ENOTFOUND {
		t.Errorf("GetResource after delete: %v, want ENOTFOUND", err)
	}
	left, err := e.ListMemories(ctx, scA, engram.MemoryFilter{Metadata: map[string]any{engram.MetaResourceID: doc.ID},
		Statuses: []engram.Status{engram.StatusActive, engram.StatusDeleted, engram.StatusSuperseded, engram.StatusExpired}})
	if err != nil || len(left.Memories) != 0 {
		t.Errorf("memories of the deleted resource: %+v %v", left, err)
	}
	res, err := e.Search(ctx, engram.SearchRequest{Scope: scA, Query: "Zahnräder Donnerstag"})
	if err != nil || len(res.Hits) != 0 {
		t.Errorf("search after delete: %+v %v", res, err)
	}
	if err := e.Store().View(ctx, func(r engram.Reader) error {
		_, err := r.ResourceChunk(ctx, nsA, doc.ID, 0)
		return err
	}); code(err) != engram.ENOTFOUND {
		t.Errorf("the deleted resource's content: %v, want ENOTFOUND", err)
	}
}

// checkCitation checks that m cites resource id with a span of text that
// holds m's value, in bytes and in characters.
func checkCitation(t *testing.T, m engram.Memory, id, text string) {
	t.Helper()
	cite, _ := m.Metadata[engram.MetaResource].(map[string]any)
	if m.Kind != engram.KindResource || m.Metadata[engram.MetaResourceID] != id || cite == nil || cite["resource_id"] != id {
		t.Fatalf("memory %+v does not cite resource %s", m, id)
	}
	start, end := num(cite["start"]), num(cite["end"])
	if text[start:end] != m.Value {
		t.Errorf("span [%d,%d) holds %q, want %q", start, end, text[start:end], m.Value)
	}
	cs, ce := num(cite["char_start"]), num(cite["char_end"])
	if string([]rune(text)[cs:ce]) != m.Value {
		t.Errorf("char span [%d,%d) does not hold %q", cs, ce, m.Value)
	}
	if hs, _ := cite["headings"].([]any); len(hs) == 0 || hs[0] != "Handbuch" {
		t.Errorf("heading path %v, want it to start with Handbuch", cite["headings"])
	}
}

// testResourcePDF: a PDF made here is split per page into memories that
// carry their page, and search finds them.
func testResourcePDF(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	f := fpdf.New("P", "mm", "A4", "")
	tr := f.UnicodeTranslatorFromDescriptor("")
	f.SetFont("Helvetica", "", 12)
	for _, p := range []string{"The lighthouse keeper logs every passing ship.", "Die Brücke über den Fluß wird im März gestrichen."} {
		f.AddPage()
		f.MultiCell(0, 6, tr(p), "", "L", false)
	}
	var b bytes.Buffer
	if err := f.Output(&b); err != nil {
		t.Fatal(err)
	}
	ns := engram.Namespace{Org: "respdf", Project: "p", User: "alice"}
	r := addResource(t, e, ns, "report.pdf", "application/pdf", b.Bytes())
	if r.Memories != 2 {
		t.Fatalf("the PDF made %d memories, want 2", r.Memories)
	}
	res, err := e.Search(ctx, engram.SearchRequest{Scope: engram.ScopeOf(ns), Query: "Brücke gestrichen"})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search: %+v %v", res, err)
	}
	cite, _ := res.Hits[0].Memory.Metadata[engram.MetaResource].(map[string]any)
	if !strings.Contains(res.Hits[0].Memory.Value, "Brücke über den Fluß") || num(cite["page"]) != 2 {
		t.Errorf("hit %+v, want page 2's text", res.Hits[0].Memory)
	}
	if _, err := e.AddResource(ctx, engram.Resource{Namespace: ns, Name: "bad.pdf", MIMEType: "application/pdf"}, strings.NewReader("%PDF-1.4 broken")); code(err) != engram.EINVALID {
		t.Errorf("a broken PDF: %v, want EINVALID", err)
	}
	checkNothingPending(t, e, ns, r.Size)
}

// checkNothingPending checks that the tenant of n stores exactly want bytes
// of resources: a failed upload left none.
func checkNothingPending(t *testing.T, e *engine.Engine, n engram.Namespace, want int64) {
	t.Helper()
	var got int64
	if err := e.Store().View(ctx, func(r engram.Reader) (err error) {
		got, err = r.ResourceBytes(ctx, n)
		return err
	}); err != nil || got != want {
		t.Errorf("the tenant stores %d bytes of resources (%v), want %d", got, err, want)
	}
}

// testResourceQuota: an upload that would pass the tenant's quota is
// ETOOLARGE naming the quota and stores nothing; another tenant has its
// own quota; deleting frees the space.
func testResourceQuota(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{ResourceQuota: 1000})
	nsA := engram.Namespace{Org: "resquota", Project: "p", User: "alice"}
	nsB := engram.Namespace{Org: "resquota", Project: "p", User: "bob"}
	scA, scB := engram.ScopeOf(nsA), engram.ScopeOf(nsB)
	first := addResource(t, e, nsA, "a.txt", "text/plain", bytes.Repeat([]byte("a "), 300))
	_, err := e.AddResource(ctx, engram.Resource{Namespace: nsB, Name: "b.txt", MIMEType: "text/plain"}, bytes.NewReader(bytes.Repeat([]byte("b "), 300)))
	if code(err) != engram.ETOOLARGE || !strings.Contains(err.Error(), "1000 bytes") {
		t.Fatalf("over the quota: %v, want ETOOLARGE naming 1000 bytes", err)
	}
	checkNothingPending(t, e, nsA, first.Size)
	if page, _ := e.ListMemories(ctx, scB, engram.MemoryFilter{}); len(page.Memories) != 0 {
		t.Errorf("the refused upload left memories: %+v", page.Memories)
	}
	other := engram.Namespace{Org: "resquota2", Project: "p", User: "alice"}
	addResource(t, e, other, "c.txt", "text/plain", bytes.Repeat([]byte("c "), 300))
	if err := e.DeleteResource(ctx, scA, first.ID); err != nil {
		t.Fatal(err)
	}
	addResource(t, e, nsB, "b.txt", "text/plain", bytes.Repeat([]byte("b "), 300))
}

// testResourceIsolation: another user or tenant can neither get, list,
// download nor delete a resource, and does not find its memories.
func testResourceIsolation(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	nsA := engram.Namespace{Org: "resiso", Project: "p", User: "alice"}
	scA, scB := engram.ScopeOf(nsA), engram.Scope{Org: "resiso", Project: "p", User: "bob"}
	r := addResource(t, e, nsA, "handbuch.md", "text/markdown", []byte(handbook))
	for _, s := range []engram.Scope{scB, {Org: "globex", Project: "p", User: "alice"}, {Org: "resiso", Project: "p", IncludeShared: true}} {
		if _, err := e.GetResource(ctx, s, r.ID); code(err) != engram.ENOTFOUND {
			t.Errorf("get from %+v: %v", s, err)
		}
		if _, _, err := e.OpenResource(ctx, s, r.ID); code(err) != engram.ENOTFOUND {
			t.Errorf("open from %+v: %v", s, err)
		}
		if err := e.DeleteResource(ctx, s, r.ID); code(err) != engram.ENOTFOUND {
			t.Errorf("delete from %+v: %v", s, err)
		}
		if page, err := e.ListResources(ctx, s, engram.ResourceFilter{}); err != nil || len(page.Resources) != 0 {
			t.Errorf("list from %+v: %+v %v", s, page, err)
		}
		if res, err := e.Search(ctx, engram.SearchRequest{Scope: s, Query: "Zahnräder"}); err != nil || len(res.Hits) != 0 {
			t.Errorf("search from %+v: %+v %v", s, res, err)
		}
	}
	if got := download(t, e, scA, r.ID); string(got) != handbook {
		t.Errorf("the owner's download changed: %q", got)
	}
	if _, err := e.AddResource(ctx, engram.Resource{Namespace: nsA, MIMEType: "text/plain"}, strings.NewReader("x")); code(err) != engram.EINVALID || !strings.Contains(err.Error(), "name") {
		t.Errorf("no name: %v, want EINVALID naming name", err)
	}
}

// num reads a number of metadata as stores give it back (json.Number) or
// as JSON decodes it (float64).
func num(v any) int {
	switch x := v.(type) {
	case json.Number:
		n, _ := x.Int64()
		return int(n)
	case float64:
		return int(x)
	}
	return -1
}

// testResourceAbandoned: an upload that never completed and is older than
// engine.UploadTimeout is removed with its chunks by SweepUploads; a
// recent one and complete resources stay.
func testResourceAbandoned(t *testing.T, open Open) {
	now := t0.Add(48 * time.Hour)
	e := newEngine(t, open, engine.Options{Now: func() time.Time { return now }})
	ns := engram.Namespace{Org: "ressweep", Project: "p", User: "alice"}
	done := addResource(t, e, ns, "done.txt", "text/plain", []byte("fertig"))
	pending := func(age time.Duration) string {
		r := &engram.Resource{ID: engram.NewID(), Namespace: ns, Name: "half", MIMEType: "text/plain", CreatedAt: now.Add(-age)}
		err := e.Store().Update(ctx, func(tx engram.Tx) error {
			if err := tx.InsertResource(ctx, r); err != nil {
				return err
			}
			return tx.PutResourceChunk(ctx, ns, r.ID, 0, []byte("halb"))
		})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	old, recent := pending(engine.UploadTimeout+time.Minute), pending(time.Minute)
	n, err := e.SweepUploads(ctx)
	if err != nil || n != 1 {
		t.Fatalf("SweepUploads = %d, %v; want 1", n, err)
	}
	for id, want := range map[string]string{old: engram.ENOTFOUND, recent: ""} {
		err := e.Store().View(ctx, func(r engram.Reader) error {
			_, err := r.ResourceChunk(ctx, ns, id, 0)
			return err
		})
		if code(err) != want {
			t.Errorf("chunk of upload %s after the sweep: %v, want code %q", id, err, want)
		}
	}
	checkNothingPending(t, e, ns, done.Size+4)
	if _, err := e.GetResource(ctx, engram.ScopeOf(ns), done.ID); err != nil {
		t.Errorf("the complete resource after the sweep: %v", err)
	}
}

// testResourceDedupe: the same bytes uploaded twice into one namespace are
// stored once (the second upload answers with the first resource, and the
// tenant's bytes, counted over all its users, hold them once), while another user's upload of them, or
// other bytes, are resources of their own; deleting the resource frees
// the bytes.
func testResourceDedupe(t *testing.T, open Open) {
	nsA := engram.Namespace{Org: "resdedupe", Project: "p", User: "alice"}
	nsB := engram.Namespace{Org: "resdedupe", Project: "p", User: "bob"}
	scA, scB := engram.ScopeOf(nsA), engram.ScopeOf(nsB)
	e := newEngine(t, open, engine.Options{})
	content := []byte("# Notiz\n\nDer Schlüssel liegt unter der Matte.\n\n钥匙在门垫下面。\n")
	first := addResource(t, e, nsA, "notiz.md", "text/markdown", content)
	again := addResource(t, e, nsA, "kopie.md", "text/markdown", content)
	if again.ID != first.ID || again.Name != "notiz.md" || again.Memories != first.Memories {
		t.Errorf("second upload of the same bytes = %+v, want the first resource %+v", again, first)
	}
	used := func() int64 {
		var n int64
		if err := e.Store().View(ctx, func(r engram.Reader) error {
			var err error
			n, err = r.ResourceBytes(ctx, nsA)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if got := used(); got != int64(len(content)) {
		t.Errorf("the tenant stores %d bytes, want %d (one copy)", got, len(content))
	}
	if n := countMemories(t, e, scA); n != first.Memories {
		t.Errorf("%d memories, want the %d of one copy", n, first.Memories)
	}
	bobs := addResource(t, e, nsB, "notiz.md", "text/markdown", content)
	other := addResource(t, e, nsA, "anders.md", "text/markdown", append(content, '!'))
	if bobs.ID == first.ID || other.ID == first.ID {
		t.Errorf("another user's copy or other bytes share the resource: %s %s %s", first.ID, bobs.ID, other.ID)
	}
	if got := download(t, e, scA, first.ID); !bytes.Equal(got, content) {
		t.Errorf("download = %q", got)
	}
	if err := e.DeleteResource(ctx, scA, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.GetResource(ctx, scB, bobs.ID); err != nil {
		t.Errorf("bob's copy after alice's delete: %v", err)
	}
	if got, want := used(), int64(2*len(content)+1); got != want {
		t.Errorf("after the delete the tenant stores %d bytes, want %d (bob's copy and the other bytes)", got, want)
	}
}
