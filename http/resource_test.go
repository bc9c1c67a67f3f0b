package http_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/storeopen"
)

// multipartFile returns a multipart/form-data body with one file part
// and its Content-Type header.
func multipartFile(t *testing.T, filename, mimeType string, content []byte) (string, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
	if mimeType != "" {
		h.Set("Content-Type", mimeType)
	}
	p, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	p.Write(content)
	w.Close()
	return b.String(), w.FormDataContentType()
}

// newResourceEnv is a real engine behind a real server that requires keys,
// with a resource quota of quota bytes per tenant.
func newResourceEnv(t *testing.T, quota int64) *authEnv {
	t.Helper()
	eng, err := storeopen.Engine(context.Background(), t.TempDir(), engine.Options{Logger: discardLogger(), AccessFlush: time.Hour, ResourceQuota: quota})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	keys := engram.Keys{Store: eng.Store()}
	srv := httptest.NewServer(engramhttp.NewServer(eng, engramhttp.ServerOptions{Logger: discardLogger(), Keys: keys}))
	t.Cleanup(srv.Close)
	return &authEnv{srv: srv, keys: keys}
}

func upload(t *testing.T, e *authEnv, key, query, filename, mimeType string, content []byte) rawResponse {
	t.Helper()
	body, ct := multipartFile(t, filename, mimeType, content)
	return do(t, "POST", e.srv.URL+"/v1/resources?"+query, body, "Content-Type", ct, "Authorization", "Bearer "+key)
}

// TestResources_HTTP: upload a German Markdown document as multipart,
// find a paragraph by search with its citation, download it
// byte-identical with the ETag, see that other users and tenants get 404
// or 403, and delete it with its memories.
func TestResources_HTTP(t *testing.T) {
	e := newResourceEnv(t, 0)
	alice := e.key(t, "o", "p", "alice", engram.RoleWrite)
	doc := []byte("# Anleitung\n\nDie Kaffeemaschine braucht entkalktes Wasser.\n\n## Reinigung\n\nDer Filter wird freitags gespült.\n")
	r := upload(t, e, alice, "org=o&project=p&user=alice&source=wiki", "anleitung.md", "", doc)
	if r.Status != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.Status, r.Body)
	}
	var res engram.Resource
	if err := json.Unmarshal(r.Body, &res); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(doc)
	if res.SHA256 != hex.EncodeToString(sum[:]) || res.MIMEType != "text/markdown; charset=utf-8" || res.Memories != 2 || res.Source != "wiki" || res.Name != "anleitung.md" {
		t.Fatalf("resource = %+v", res)
	}
	q := "?org=o&project=p&user=alice"

	got := e.call(t, alice, "GET", "/v1/resources/"+res.ID+"/content"+q, "")
	if got.Status != 200 || !bytes.Equal(got.Body, doc) || got.Header.Get("ETag") != `"`+res.SHA256+`"` ||
		got.Header.Get("Content-Length") != strconv.Itoa(len(doc)) || !strings.HasPrefix(got.Header.Get("Content-Type"), "text/markdown") {
		t.Fatalf("download: %d %q %v", got.Status, got.Body, got.Header)
	}
	if nm := do(t, "GET", e.srv.URL+"/v1/resources/"+res.ID+"/content"+q, "", "Authorization", "Bearer "+alice, "If-None-Match", `"`+res.SHA256+`"`); nm.Status != http.StatusNotModified {
		t.Errorf("If-None-Match: %d", nm.Status)
	}

	s := e.call(t, alice, "POST", "/v1/search", `{"scope":{"org":"o","project":"p","user":"alice"},"query":"Filter freitags gespült"}`)
	var sr engram.SearchResult
	if err := json.Unmarshal(s.Body, &sr); err != nil || len(sr.Hits) == 0 {
		t.Fatalf("search: %d %s", s.Status, s.Body)
	}
	hit := sr.Hits[0].Memory
	cite, _ := hit.Metadata["resource"].(map[string]any)
	if hit.Value != "Der Filter wird freitags gespült." || hit.Metadata["resource_id"] != res.ID || cite == nil {
		t.Fatalf("hit = %+v", hit)
	}
	start, end := int(cite["start"].(float64)), int(cite["end"].(float64))
	if string(doc[start:end]) != hit.Value {
		t.Errorf("the cited span holds %q", doc[start:end])
	}

	bob := e.key(t, "o", "p", "bob", engram.RoleAdmin)
	other := e.key(t, "x", "p", "alice", engram.RoleAdmin)
	for _, c := range []struct {
		key, query string
		status     int
	}{
		{bob, "?org=o&project=p&user=bob", 404},
		{bob, q, 403}, // bob's key is bound to bob
		{other, "?org=x&project=p&user=alice", 404},
		{other, q, 403},
	} {
		for _, m := range []struct{ method, path string }{
			{"GET", "/v1/resources/" + res.ID}, {"GET", "/v1/resources/" + res.ID + "/content"}, {"DELETE", "/v1/resources/" + res.ID},
		} {
			if r := e.call(t, c.key, m.method, m.path+c.query, ""); r.Status != c.status {
				t.Errorf("%s %s%s: %d, want %d", m.method, m.path, c.query, r.Status, c.status)
			}
		}
		list := e.call(t, c.key, "GET", "/v1/resources"+c.query, "")
		if c.status == 404 && (list.Status != 200 || strings.Contains(string(list.Body), res.ID)) {
			t.Errorf("list%s: %d %s", c.query, list.Status, list.Body)
		}
	}

	if r := e.call(t, alice, "DELETE", "/v1/resources/"+res.ID+q, ""); r.Status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := e.call(t, alice, "GET", "/v1/resources/"+res.ID+"/content"+q, ""); r.Status != 404 {
		t.Errorf("download after delete: %d", r.Status)
	}
	s = e.call(t, alice, "POST", "/v1/search", `{"scope":{"org":"o","project":"p","user":"alice"},"query":"Filter freitags gespült"}`)
	if strings.Contains(string(s.Body), "freitags") {
		t.Errorf("search after delete still finds the document: %s", s.Body)
	}
}

// TestResources_HTTPRefusals: over the quota is 413 naming it and stores
// nothing; a body that is not multipart is 415; no file part is 400.
func TestResources_HTTPRefusals(t *testing.T) {
	e := newResourceEnv(t, 100)
	alice := e.key(t, "o", "p", "alice", engram.RoleWrite)
	q := "org=o&project=p&user=alice"
	r := upload(t, e, alice, q, "big.txt", "text/plain", bytes.Repeat([]byte("x"), 150))
	wantError(t, "over quota", r, 413, engram.ETOOLARGE, "quota of 100 bytes")
	if l := e.call(t, alice, "GET", "/v1/resources?"+q, ""); !strings.Contains(string(l.Body), `"resources":[]`) {
		t.Errorf("the refused upload is listed: %s", l.Body)
	}
	r = do(t, "POST", e.srv.URL+"/v1/resources?"+q, "plain", "Content-Type", "text/plain", "Authorization", "Bearer "+alice)
	wantError(t, "text/plain body", r, 415, engram.EMEDIATYPE, "multipart/form-data")
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("other", "x")
	w.Close()
	r = do(t, "POST", e.srv.URL+"/v1/resources?"+q, b.String(), "Content-Type", w.FormDataContentType(), "Authorization", "Bearer "+alice)
	wantError(t, "no file part", r, 400, engram.EINVALID, `"file"`)
	if r := upload(t, e, alice, q, "ok.txt", "text/plain", []byte("klein")); r.Status != 201 {
		t.Errorf("a small upload: %d %s", r.Status, r.Body)
	}
}

// TestResources_Client: the Go client uploads (streamed), lists, opens and
// deletes a resource over the real server, and reports a foreign id as
// not found.
func TestResources_Client(t *testing.T) {
	ctx := context.Background()
	e := newResourceEnv(t, 0)
	c := engramhttp.NewClient(e.srv.URL, engramhttp.ClientOptions{Key: e.key(t, "o", "p", "alice", engram.RoleWrite)})
	ns := engram.Namespace{Org: "o", Project: "p", User: "alice"}
	// Over one chunk; not a document, so it is kept without being split
	// into hundreds of memories (the document path has its own tests),
	// which made this test slow under the race detector.
	content := bytes.Repeat([]byte("长江 Yangtze. \x00\x01"), 90000)
	res, err := c.AddResource(ctx, engram.Resource{Namespace: ns, Name: "river.bin", MIMEType: "application/octet-stream"}, bytes.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if res.Size != int64(len(content)) || res.Size <= 1<<20 || res.Memories != 0 {
		t.Fatalf("resource = %+v, want %d bytes (over one chunk) and no memories", res, len(content))
	}
	page, err := c.ListResources(ctx, engram.ScopeOf(ns), engram.ResourceFilter{})
	if err != nil || len(page.Resources) != 1 {
		t.Fatalf("list: %+v %v", page, err)
	}
	_, rc, err := c.OpenResource(ctx, engram.ScopeOf(ns), res.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(got, content) {
		t.Fatalf("download: %d bytes, %v", len(got), err)
	}
	if err := c.DeleteResource(ctx, engram.ScopeOf(ns), res.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetResource(ctx, engram.ScopeOf(ns), res.ID); engram.ErrorCode(err) != engram.ENOTFOUND {
		t.Errorf("get after delete: %v", err)
	}
}
