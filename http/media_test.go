package http_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestMedia_HTTP: an episode posted with media (an image with a caption,
// an audio with a span and German and Chinese transcript segments) is
// stored with them, its texts are found by search citing the resource and
// the segment's speaker, media referring to another user's resource or
// with a bad span are 400 naming the field, and an image without a
// caption on a server without a model endpoint is listed as unformed.
func TestMedia_HTTP(t *testing.T) {
	e := newResourceEnv(t, 0)
	alice := e.key(t, "o", "p", "alice", engram.RoleWrite)
	bob := e.key(t, "o", "p", "bob", engram.RoleWrite)
	id := func(key, user, name, mime string) string {
		r := upload(t, e, key, "org=o&project=p&user="+user, name, mime, []byte("bytes of "+name))
		var res engram.Resource
		if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &res) != nil {
			t.Fatalf("upload %s: %d %s", name, r.Status, r.Body)
		}
		return res.ID
	}
	img, voice, bobs := id(alice, "alice", "beach.jpg", "image/jpeg"), id(alice, "alice", "call.ogg", "audio/ogg"), id(bob, "bob", "b.jpg", "image/jpeg")

	body := `{"namespace":{"org":"o","project":"p","user":"alice"},"episodes":[{"speaker":"Alice","content":"Fotos und eine Sprachnachricht vom Strand","media":[
		{"resource_id":"` + img + `","kind":"image","caption":"Zwei Kinder bauen eine Sandburg am Ostseestrand."},
		{"resource_id":"` + voice + `","kind":"audio","start":3,"end":20.5,"segments":[
			{"start":3,"end":9,"speaker":"Mia","text":"Wir treffen uns am Leuchtturm um fünf."},
			{"start":9,"end":20.5,"speaker":"王芳","text":"我们明天坐火车回柏林。"}]}]}]}`
	r := e.call(t, alice, "POST", "/v1/episodes", body)
	var res engram.AddEpisodesResult
	if r.Status != http.StatusCreated || json.Unmarshal(r.Body, &res) != nil {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	if len(res.Episodes) != 1 || len(res.Episodes[0].Media) != 2 || res.Episodes[0].Media[1].Segments[1].Speaker != "王芳" || len(res.Unformed) != 0 {
		t.Fatalf("add result = %s", r.Body)
	}
	for _, c := range []struct{ query, resource, speaker string }{
		{"Sandburg Ostseestrand", img, ""},
		{"Leuchtturm um fünf", voice, "Mia"},
		{"坐火车回柏林", voice, "王芳"},
	} {
		s := e.call(t, alice, "POST", "/v1/search", `{"scope":{"org":"o","project":"p","user":"alice"},"query":"`+c.query+`","channels":["bm25"]}`)
		var sr engram.SearchResult
		if err := json.Unmarshal(s.Body, &sr); err != nil || len(sr.Hits) == 0 {
			t.Fatalf("search %q: %d %s", c.query, s.Status, s.Body)
		}
		m := sr.Hits[0].Memory
		cite, _ := m.Metadata[engram.MetaMedia].(map[string]any)
		if m.Metadata[engram.MetaResourceID] != c.resource || cite == nil || (c.speaker != "" && (m.Speaker() != c.speaker || cite["speaker"] != c.speaker)) {
			t.Errorf("search %q: hit %+v, want it to cite %s (speaker %q)", c.query, m, c.resource, c.speaker)
		}
	}

	for _, c := range []struct{ media, want string }{
		{`{"resource_id":"` + bobs + `","kind":"image","caption":"x"}`, "episodes[0].media[0].resource_id"},
		{`{"resource_id":"` + voice + `","kind":"audio","start":5,"end":2}`, "media[0]: the time span"},
		{`{"resource_id":"` + voice + `","kind":"hologram"}`, "media[0].kind"},
	} {
		r := e.call(t, alice, "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"p","user":"alice"},"episodes":[{"content":"x","media":[`+c.media+`]}]}`)
		if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), c.want) || !strings.Contains(string(r.Body), "episodes[0]") {
			t.Errorf("media %s: %d %s, want 400 naming %s", c.media, r.Status, r.Body, c.want)
		}
	}

	r = e.call(t, alice, "POST", "/v1/episodes", `{"namespace":{"org":"o","project":"p","user":"alice"},"episodes":[{"content":"noch ein Foto","media":[{"resource_id":"`+img+`","kind":"image"}]}]}`)
	if err := json.Unmarshal(r.Body, &res); err != nil || r.Status != http.StatusCreated || len(res.Unformed) != 1 || !strings.Contains(res.Unformed[0], "episodes[0].media[0]") {
		t.Errorf("an image without a caption: %d %s, want it listed in unformed", r.Status, r.Body)
	}
}
