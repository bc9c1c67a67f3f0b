package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestAddMediaCLI: engram add --media attaches stored resources (their
// kind taken from the MIME type or given) with a caption and a German or
// Chinese transcript, which search then finds; an image without a caption
// is stored and reported unformed; a bad span or an unknown resource exits
// non-zero naming it.
func TestAddMediaCLI(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	files := t.TempDir()
	local := localCLI(t, dir)
	upload := func(name, content string) string {
		p := filepath.Join(files, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		var r engram.Resource
		local.json(&r, "resources", "add", "--user", "ann", p)
		return r.ID
	}
	photo, call := upload("hafen.png", "\x89PNG fake"), upload("anruf.mp3", "ID3 fake")

	out := local.ok("add", "--user", "ann", "--speaker", "Ann",
		"--media", photo, "--caption", "Ein Leuchtturm im Nebel an der Nordsee.",
		"--media", call+":audio:2-14.5", "--transcript", "我们周六在杭州见面。",
		"Ann schickte ein Foto und eine Sprachnachricht")
	if strings.Contains(out, "unformed") {
		t.Errorf("add prints %q, want nothing unformed", out)
	}
	var eps struct{ Episodes []engram.Episode }
	local.json(&eps, "list", "--episodes", "--user", "ann")
	if len(eps.Episodes) != 1 || len(eps.Episodes[0].Media) != 2 || eps.Episodes[0].Media[0].Kind != engram.MediaImage || *eps.Episodes[0].Media[1].End != 14.5 {
		t.Fatalf("stored episodes = %+v", eps.Episodes)
	}
	for q, want := range map[string]string{"Leuchtturm Nebel": "Leuchtturm", "杭州见面": "杭州"} {
		if got := local.ok("search", "--user", "ann", q); !strings.Contains(got, want) {
			t.Errorf("search %q prints %q", q, got)
		}
	}

	if out := local.ok("add", "--user", "ann", "--media", photo, "noch ein Foto"); !strings.Contains(out, "unformed episodes[0].media[0]") {
		t.Errorf("an image without a caption: add prints %q, want it unformed", out)
	}
	if res := local.run("add", "--user", "ann", "--media", call+":audio:9-3", "x"); res.code == 0 || !strings.Contains(res.stderr, "media[0]") {
		t.Errorf("a bad span: exit %d, %q", res.code, res.stderr)
	}
	if res := local.run("add", "--user", "bob", "--media", call+":audio", "x"); res.code == 0 || !strings.Contains(res.stderr, "media[0].resource_id") {
		t.Errorf("another user's resource: exit %d, %q", res.code, res.stderr)
	}
	local.fail(2, "add", "--user", "ann", "--caption", "no media before", "x")
	local.fail(2, "add", "--user", "ann", "--media", call+":audio:abc", "x")
}
