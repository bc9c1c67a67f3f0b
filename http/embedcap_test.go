package http_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestMaxEmbedBytes: a request whose texts to embed total more than
// MaxEmbedBytes is refused with 413 naming the limit, before the service
// or the embedder sees it; one at the limit passes.
func TestMaxEmbedBytes(t *testing.T) {
	const limit = 100 << 10
	svc := &fakeService{}
	emb := &fakeEmbedder{dim: 4}
	srv, _ := newFakeServer(t, svc, engramhttp.ServerOptions{MaxEmbedBytes: limit, Embedder: emb})
	text := func(n int) string { return strings.Repeat("x", n) }
	list := func(format string, texts ...string) string {
		parts := make([]string, len(texts))
		for i, s := range texts {
			parts[i] = fmt.Sprintf(format, s)
		}
		return strings.Join(parts, ",")
	}
	ns := `{"org":"o","project":"p"}`
	over := []string{text(40 << 10), text(40 << 10), text(20<<10 + 1)}
	at := []string{text(40 << 10), text(40 << 10), text(20 << 10)}
	for _, tc := range []struct {
		name, path, body string
		want             int
	}{
		{"episodes over", "/v1/episodes", `{"namespace":` + ns + `,"episodes":[` + list(`{"content":%q}`, over...) + `]}`, 413},
		{"memories over", "/v1/memories", `{"namespace":` + ns + `,"memories":[` + list(`{"value":%q}`, over...) + `]}`, 413},
		{"embeddings over", "/v1/embeddings", `{"input":[` + list(`%q`, over...) + `]}`, 413},
		{"episodes at the limit", "/v1/episodes", `{"namespace":` + ns + `,"episodes":[` + list(`{"content":%q}`, at...) + `]}`, 201},
		{"embeddings at the limit", "/v1/embeddings", `{"input":[` + list(`%q`, at...) + `]}`, 200},
	} {
		calls, embedded := len(svc.Calls()), emb.embedded()
		r := do(t, "POST", srv.URL+tc.path, tc.body)
		if r.Status != tc.want {
			t.Errorf("%s: status %d, want %d (%.200s)", tc.name, r.Status, tc.want, r.Body)
			continue
		}
		if tc.want != 413 {
			continue
		}
		e := errorOf(t, r)
		if e.Error.Code != engram.ETOOLARGE || !strings.Contains(e.Error.Message, fmt.Sprintf("total %d bytes, more than the limit of %d bytes per request", 100<<10+1, limit)) {
			t.Errorf("%s: error %s", tc.name, r.Body)
		}
		if len(svc.Calls()) != calls || emb.embedded() != embedded {
			t.Errorf("%s: the request reached the service or the embedder", tc.name)
		}
	}
}
