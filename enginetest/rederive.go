package enginetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testEditRederives: over two sessions a person says where she lives and
// something else; her residence fact is then corrected by a PATCH of its
// value alone, through the library and over HTTP. The fact's cues, its
// fact_value, its full-text terms and its vectors follow the new value: a
// full-text search for the old city no longer finds it, one for the new
// city does, and a read by the old fact_value finds nothing. A patch that
// sets the cues keeps them as given. In English, German, Spanish, French
// and Chinese.
func testEditRederives(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, live, other, oldCity, newCity string
		fact                                bool // the rules former forms a residence fact
	}{
		{"en", "I live in Berlin.", "Yesterday I went hiking with my sister.", "Berlin", "Hamburg", true},
		{"de", "Ich wohne in Berlin.", "Gestern war ich mit meiner Schwester wandern.", "Berlin", "Hamburg", true},
		{"es", "Vivo en Sevilla.", "Ayer fui de excursión con mi hermana.", "Sevilla", "Valencia", true},
		{"fr", "J'habite à Lyon.", "Hier je suis allée marcher avec ma sœur.", "Lyon", "Marseille", true},
		{"zh", "我住在北京。", "昨天我和姐姐去爬山了。", "北京", "上海", false},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			st, emb, vias := bagBoth(t, open)
			for _, via := range vias {
				t.Run(via.name, func(t *testing.T) {
					ns := nsA
					ns.Session = "edit-" + via.name
					s := engram.Scope{Org: ns.Org, Project: ns.Project, User: ns.User, Session: ns.Session}
					day := t0.Add(time.Duration(len(via.name)) * 24 * time.Hour)
					said := aliceSays(t, via.svc, ns, day, tc.live)
					aliceSays(t, via.svc, ns, day.Add(26*time.Hour), tc.other)
					i := slices.IndexFunc(said.Memories, func(m engram.Memory) bool {
						return m.Metadata[engram.MetaFactAttribute] == nil && m.Metadata[engram.MetaGranularity] == nil
					})
					if i < 0 {
						t.Fatalf("no turn memory formed of %q", tc.live)
					}
					edited := []*engram.Memory{&said.Memories[i]}
					if fact := residence(t, via.svc, s); tc.fact {
						if fact == nil || !strings.Contains(fact.Value, tc.oldCity) {
							t.Fatalf("no residence fact with %s formed: %+v", tc.oldCity, fact)
						}
						edited = append(edited, fact)
					}
					for _, m := range edited {
						checkEdit(t, via.svc, st, emb, s, m, tc.oldCity, tc.newCity)
					}
					fact := edited[len(edited)-1]
					value := strings.Replace(fact.Value, tc.oldCity, tc.newCity, 1)
					// Cues the request sets are kept as given.
					cues := []string{"Umzug"}
					value2 := value + "."
					kept, err := via.svc.UpdateMemory(ctx, s, fact.ID, engram.MemoryPatch{Value: &value2, Cues: &cues})
					if err != nil || !slices.Equal(kept.Cues, cues) {
						t.Errorf("cues set by the request = %q, %v; want %q", kept.Cues, err, cues)
					}
				})
			}
		})
	}
}

// checkEdit patches the value of m, which says oldCity, to say newCity
// instead through svc, and checks that nothing of the old value is left:
// not in the abstraction, the cues or fact_value (a fact's is the new
// city), not in the full-text terms (a search for the old city misses m,
// one for the new city finds it), not in the stored vector.
func checkEdit(t *testing.T, svc engram.Service, st engram.Store, emb engram.Embedder, s engram.Scope, m *engram.Memory, oldCity, newCity string) {
	t.Helper()
	isFact := m.Metadata[engram.MetaFactAttribute] != nil
	value := strings.Replace(m.Value, oldCity, newCity, 1)
	got, err := svc.UpdateMemory(ctx, s, m.ID, engram.MemoryPatch{Value: &value, Reason: "moved"})
	if err != nil {
		t.Fatal(err)
	}
	if fv := factValueOf(got); isFact && fv != newCity {
		t.Errorf("fact_value after the edit = %q, want %q", fv, newCity)
	}
	if mentions(got.Cues, oldCity) || (isFact && !mentions(got.Cues, newCity)) {
		t.Errorf("cues after the edit of %q = %q, want %s and no %s", got.Value, got.Cues, newCity, oldCity)
	}
	if strings.Contains(got.Abstraction, oldCity) || !strings.Contains(got.Abstraction, newCity) {
		t.Errorf("abstraction after the edit = %q, want %s and no %s", got.Abstraction, newCity, oldCity)
	}
	if ids := textIn(t, svc, s, oldCity); slices.Contains(ids, m.ID) {
		t.Errorf("a full-text search for %q still finds the edited %q", oldCity, got.Value)
	}
	if ids := textIn(t, svc, s, newCity); !slices.Contains(ids, m.ID) {
		t.Errorf("a full-text search for %q misses the edited %q", newCity, got.Value)
	}
	page, err := svc.ListMemories(ctx, s, engram.MemoryFilter{Metadata: map[string]any{engram.MetaFactValue: oldCity}})
	if err != nil || slices.ContainsFunc(page.Memories, func(x engram.Memory) bool { return x.ID == m.ID }) {
		t.Errorf("a read by fact_value %s after the edit finds the edited memory (%v)", oldCity, err)
	}
	want, err := emb.Embed(ctx, []string{got.Value})
	if err != nil {
		t.Fatal(err)
	}
	if v := vectorOf(t, st, emb, got, engram.FieldValue); !slices.Equal(v, want[0]) {
		t.Errorf("the edited memory's value vector is not that of %q", got.Value)
	}
}

// aliceSays adds one turn of Alice's in ns at at through svc.
func aliceSays(t *testing.T, svc engram.Service, ns engram.Namespace, at time.Time, text string) *engram.AddEpisodesResult {
	t.Helper()
	res, err := svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns,
		Episodes: []engram.EpisodeInput{{Role: "user", Speaker: "Alice", Content: text, OccurredAt: &at}}})
	if err != nil {
		t.Fatalf("add %q: %v", text, err)
	}
	return res
}

// residence returns the active residence fact of scope s, or nil.
func residence(t *testing.T, svc engram.Service, s engram.Scope) *engram.Memory {
	t.Helper()
	p, err := svc.ListMemories(ctx, s, engram.MemoryFilter{Metadata: map[string]any{engram.MetaFactAttribute: "residence"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Memories) == 0 {
		return nil
	}
	return &p.Memories[0]
}

// mentions reports whether one of cues contains s.
func mentions(cues []string, s string) bool {
	return slices.ContainsFunc(cues, func(c string) bool { return strings.Contains(c, s) })
}

// textIn lists the memories of s a full-text-only search for q finds.
func textIn(t *testing.T, svc engram.Service, s engram.Scope, q string) []string {
	t.Helper()
	res, err := svc.Search(ctx, engram.SearchRequest{Scope: s, Query: q, K: 20, Channels: []string{engine.ChannelBM25}})
	if err != nil {
		t.Fatalf("full-text search %q: %v", q, err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.Memory.ID)
	}
	return ids
}

// vectorOf returns m's stored vector of field, nil when it has none.
func vectorOf(t *testing.T, st engram.Store, emb engram.Embedder, m *engram.Memory, field string) []float32 {
	t.Helper()
	var out []float32
	err := st.View(ctx, func(r engram.Reader) error {
		recs, err := r.GetVectors(ctx, m.Namespace, emb.Name(), []string{m.ID})
		for _, rec := range recs {
			if rec.Field == field {
				out = rec.Vec
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// via is one way the cases reach an engine: the library or HTTP.
type via struct {
	name string
	svc  engram.Service
}

// bagBoth returns a fresh store, the BagEmbedder of an engine over it, and
// the engine reached through the library and through a client of an HTTP
// server over it; all closed when t ends.
func bagBoth(t *testing.T, open Open) (engram.Store, *BagEmbedder, []via) {
	t.Helper()
	emb := &BagEmbedder{}
	st := open(t)
	t.Cleanup(func() { st.Close() })
	e, err := engine.New(ctx, st, engine.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	client, _ := overHTTP(t, e)
	return st, emb, []via{{"library", e}, {"http", client}}
}
