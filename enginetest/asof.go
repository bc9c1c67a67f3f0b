package enginetest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	engramhttp "github.com/engramhq/engram/http"
	"github.com/engramhq/engram/retrieval"
)

// reader is what the as-of tests read through: the engine itself, or the
// HTTP client of a server over it.
type reader interface {
	ListMemories(ctx context.Context, s engram.Scope, f engram.MemoryFilter) (*engram.MemoryPage, error)
	Search(ctx context.Context, req engram.SearchRequest) (*engram.SearchResult, error)
}

// overHTTP returns a client of a real HTTP server over e.
func overHTTP(t *testing.T, e *engine.Engine) (*engramhttp.Client, string) {
	t.Helper()
	srv := httptest.NewServer(engramhttp.NewServer(e, engramhttp.ServerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	return engramhttp.NewClient(srv.URL, engramhttp.ClientOptions{Actor: "tester"}), srv.URL
}

// testAsOfAttributes: a person's city and employer change at different
// times; a read as of each time, through the library and over HTTP, sees
// the facts current then, one per attribute (the new city with the old
// employer between the changes), and search as of then ranks them first,
// with nothing said later among the hits. The turn that stated both old
// facts ranks lower only for the attribute replaced by then. In English,
// German and Spanish.
func testAsOfAttributes(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, both, move, job, live, work string
	}{
		{"en", "I live in Berlin and I work at Siemens.", "I moved to Munich.", "I work at BMW now.", "Where does Alice live?", "Where does Alice work?"},
		{"de", "Ich wohne in Berlin und ich arbeite bei Siemens.", "Ich bin nach München gezogen.", "Ich arbeite jetzt bei BMW.", "Wo wohnt Alice?", "Wo arbeitet Alice?"},
		{"es", "Vivo en Berlín y trabajo en Siemens.", "Me mudé a Múnich.", "Ahora trabajo en BMW.", "¿Dónde vive Alice?", "¿Dónde trabaja Alice?"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			e := newEngine(t, open, engine.Options{})
			t1, t2, t3 := t0, t0.Add(30*24*time.Hour), t0.Add(60*24*time.Hour)
			both := say(t, e, t1, "Alice", tc.both)
			say(t, e, t2, "Alice", tc.move)
			say(t, e, t3, "Alice", tc.job)
			client, _ := overHTTP(t, e)
			for _, via := range []struct {
				name string
				r    reader
			}{{"library", e}, {"http", client}} {
				for _, at := range []struct {
					name       string
					when       time.Time
					city, firm string
					later      []string // said after, never a hit
				}{
					{"before the move", t1.Add(time.Hour), "Berl", "Siemens", []string{"Mün", "BMW"}},
					{"between the changes", t2.Add(time.Hour), "M", "Siemens", []string{"BMW"}},
					{"after both", t3.Add(time.Hour), "M", "BMW", nil},
				} {
					t.Run(via.name+"/"+at.name, func(t *testing.T) {
						asOf := at.when
						got := factsAsOf(t, via.r, asOf)
						if len(got) != 2 || !strings.HasPrefix(got["residence"], at.city) || got["workplace"] != at.firm {
							t.Errorf("facts as of %v = %v, want residence %s…, workplace %s", asOf, got, at.city, at.firm)
						}
						for _, q := range []struct{ question, want string }{{tc.live, at.city}, {tc.work, at.firm}} {
							hits := searchAsOf(t, via.r, q.question, asOf, nil)
							if len(hits) == 0 || !strings.Contains(hits[0].Memory.Value, q.want) {
								t.Errorf("%q as of %v ranks %v, want %s… first", q.question, asOf, hitValues(hits), q.want)
							}
							for _, h := range hits {
								if slices.ContainsFunc(at.later, func(s string) bool { return strings.Contains(h.Memory.Value, s) }) {
									t.Errorf("%q as of %v found %q, said later", q.question, asOf, h.Memory.Value)
								}
							}
						}
					})
				}
			}
			// An as-of context leaves out the profile, which says what
			// is true now; a current one starts with it.
			prof := engram.Memory{Kind: engram.KindCore, Value: "Alice: lives in Munich, works at BMW.", Metadata: map[string]any{engram.MetaProfile: true}}
			if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsA, Memories: []engram.Memory{prof}}); err != nil {
				t.Fatal(err)
			}
			for _, r := range []reader{e, client} {
				now, err := r.Search(ctx, engram.SearchRequest{Scope: scA, Query: tc.work, Budget: 500})
				if err != nil || !strings.HasPrefix(now.Context, prof.Value) {
					t.Errorf("context now = %q, %v; want the profile first", now.Context, err)
				}
				asOf := t2.Add(time.Hour)
				then, err := r.Search(ctx, engram.SearchRequest{Scope: scA, Query: tc.work, Budget: 500, Filter: engram.MemoryFilter{ValidAt: &asOf}})
				if err != nil || strings.Contains(then.Context, "BMW") || !strings.Contains(then.Context, "Siemens") {
					t.Errorf("context as of %v = %q, %v; want Siemens and no BMW", asOf, then.Context, err)
				}
			}
			// Between the changes the turn of both old facts ranks lower
			// for where she lives (replaced), not for where she works.
			between := t2.Add(time.Hour)
			for _, q := range []struct {
				question string
				stale    bool
			}{{tc.live, true}, {tc.work, false}} {
				turn := hitOf(searchAsOf(t, e, q.question, between, []engram.Kind{engram.KindEpisodic}), both.Memories[0].ID)
				if turn == nil {
					t.Fatalf("%q as of %v misses the turn %q", q.question, between, tc.both)
				}
				if _, stale := turn.Factors[retrieval.FactorStale]; stale != q.stale {
					t.Errorf("%q as of %v: the turn's stale factor present = %v, want %v (factors %v)", q.question, between, stale, q.stale, turn.Factors)
				}
			}
		})
	}
}

// factsAsOf lists, by default statuses, the facts valid at asOf, as
// attribute → value.
func factsAsOf(t *testing.T, r reader, asOf time.Time) map[string]string {
	t.Helper()
	p, err := r.ListMemories(ctx, scA, engram.MemoryFilter{ValidAt: &asOf, Limit: engram.MaxLimit,
		Metadata: map[string]any{engram.MetaFactSubject: "Alice"}})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range p.Memories {
		attr, _ := m.Metadata[engram.MetaFactAttribute].(string)
		if _, dup := out[attr]; dup {
			t.Errorf("two %s facts as of %v: %v", attr, asOf, values(p.Memories))
		}
		out[attr] = factValueOf(&m)
	}
	return out
}

func factValueOf(m *engram.Memory) string {
	v, _ := m.Metadata[engram.MetaFactValue].(string)
	return v
}

func searchAsOf(t *testing.T, r reader, q string, asOf time.Time, kinds []engram.Kind) []engram.Hit {
	t.Helper()
	res, err := r.Search(ctx, engram.SearchRequest{Scope: scA, Query: q, K: 5, Explain: true,
		Filter: engram.MemoryFilter{ValidAt: &asOf, Kinds: kinds}})
	if err != nil {
		t.Fatalf("search %q as of %v: %v", q, asOf, err)
	}
	return res.Hits
}

func hitOf(hs []engram.Hit, id string) *engram.Hit {
	for i := range hs {
		if hs[i].Memory.ID == id {
			return &hs[i]
		}
	}
	return nil
}

// testAsOfBadInput: over HTTP, a valid_at that is no time is a 400 that
// names the field, on the list and the search routes.
func testAsOfBadInput(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	_, base := overHTTP(t, e)
	scope := "org=acme&project=p&user=alice"
	for _, c := range []struct {
		method, path, body string
	}{
		{"GET", "/v1/memories?" + scope + "&valid_at=" + url.QueryEscape("last tuesday"), ""},
		{"POST", "/v1/memories/list", `{"scope":{"org":"acme","project":"p","user":"alice"},"filter":{"valid_at":"2024-13-01"}}`},
		{"POST", "/v1/search", `{"scope":{"org":"acme","project":"p","user":"alice"},"query":"where","filter":{"valid_at":"soon"}}`},
	} {
		req, err := http.NewRequestWithContext(ctx, c.method, base+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "valid_at") {
			t.Errorf("%s %s: %d %s, want 400 naming valid_at", c.method, c.path, resp.StatusCode, body)
		}
	}
}
