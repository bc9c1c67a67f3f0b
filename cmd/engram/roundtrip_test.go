package main_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestExportImportRoundTrip exports a scope, imports it into a fresh data
// directory and exports again: every record comes back byte for byte. The
// only difference allowed is the audit entry each Import call writes about
// itself (op "import").
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	src := localCLI(t, filepath.Join(tmp, "src"))

	// A scope with every record type and every kind of history.
	var eps engram.AddEpisodesResult
	src.json(&eps, "add", "--user", "ann", "--role", "user", "--meta", "lang=en",
		"I moved to Lisbon in May", "My cat is called Miso", "Dinner at 8 with <Bob> & \"friends\"")
	var mems struct{ Memories []engram.Memory }
	src.json(&mems, "add", "--memory", "--user", "ann", "--kind", "core", "--cue", "name",
		"--valid-from", "2020-01-01T00:00:00.123456789Z", "--importance", "0.7", "Ann's full name is Ann Lee")
	id := mems.Memories[0].ID
	src.ok("update", "--user", "ann", id, "--value", "Ann's full name is Ann Lee-Park", "--reason", "married")
	src.ok("delete", "--user", "ann", eps.Memories[0].ID)
	src.ok("delete", "--user", "ann", "--hard", eps.Memories[1].ID)
	src.ok("get", "--user", "ann", id) // an access, so access_count and last_accessed are set
	// Another user's records must not travel with ann's.
	src.ok("add", "--user", "bob", "Bob likes tea")

	exported := filepath.Join(tmp, "a.jsonl")
	src.ok("export", "--user", "ann", "--out", exported)
	a := readFile(t, exported)
	if got := src.ok("export", "--user", "ann"); got != a {
		t.Fatalf("export to stdout differs from --out")
	}
	types := map[string]int{}
	for _, l := range lines(a) {
		r := decodeRecord(t, l)
		types[r.Type]++
		if n, _ := r.Namespace(); n.User != "ann" {
			t.Errorf("export of ann holds a record of user %q: %s", n.User, l)
		}
	}
	for _, typ := range []string{engram.RecordEpisode, engram.RecordMemory, engram.RecordVersion, engram.RecordAudit} {
		if types[typ] == 0 {
			t.Errorf("export has no %s records: %v", typ, types)
		}
	}

	// Import into a fresh directory and export again.
	dst := localCLI(t, filepath.Join(tmp, "dst"))
	var res engram.ImportResult
	dst.json(&res, "import", "--user", "ann", exported)
	if res.Episodes != types[engram.RecordEpisode] || res.Memories != types[engram.RecordMemory] ||
		res.Versions != types[engram.RecordVersion] || res.Audit != types[engram.RecordAudit] || res.Skipped != 0 {
		t.Errorf("import result %+v, want the export's counts %v", res, types)
	}
	b := dst.ok("export", "--user", "ann")
	if got, n := withoutImportAudit(t, b); got != a || n != 1 {
		t.Errorf("re-export differs from the export (import audit entries: %d, want 1)\nfirst:  %s\nsecond: %s", n, a, got)
	}

	// Importing the same file again stores nothing new.
	dst.json(&res, "import", "--user", "ann", "--file", exported)
	if got, want := res.Skipped, len(lines(a)); got != want || res.Episodes+res.Memories+res.Versions+res.Audit != 0 {
		t.Errorf("second import %+v, want all %d records skipped", res, want)
	}

	// From stdin, in many small chunks (one transaction each), with a
	// progress bar: the same records arrive.
	chunked := localCLI(t, filepath.Join(tmp, "chunked"))
	chunked.stdin = a
	r := chunked.run("import", "--user", "ann", "-", "--chunk-bytes", "600", "--progress")
	if r.code != 0 {
		t.Fatalf("chunked import: exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "importing") || !strings.Contains(r.stderr, "100%") {
		t.Errorf("import --progress stderr lacks a finished bar: %q", r.stderr)
	}
	chunked.stdin = ""
	c := chunked.ok("export", "--user", "ann")
	got, n := withoutImportAudit(t, c)
	if got != a {
		t.Errorf("chunked import re-export differs from the export")
	}
	if n < 2 {
		t.Errorf("chunked import made %d Import calls, want several", n)
	}

	// Without --progress and with stderr not a terminal, no bar.
	quiet := localCLI(t, filepath.Join(tmp, "quiet"))
	if r := quiet.run("import", "--user", "ann", exported); r.code != 0 || r.stderr != "" {
		t.Errorf("import without --progress: exit %d, stderr %q; want 0 and nothing", r.code, r.stderr)
	}

	// Records of another scope are refused as a whole.
	wrong := localCLI(t, filepath.Join(tmp, "wrong"))
	wrong.fail(1, "import", "--user", "bob", exported)
	wrong.ok("add", "--user", "bob", "--no-form", "placeholder") // creates the directory if the import did not
	if out := wrong.ok("export", "--user", "ann"); out != "" {
		t.Errorf("refused import stored records:\n%s", out)
	}
}

func decodeRecord(t *testing.T, line string) engram.Record {
	t.Helper()
	var r engram.Record
	if err := json.Unmarshal([]byte(line), &r); err != nil {
		t.Fatalf("export line %q: %v", line, err)
	}
	return r
}

// withoutImportAudit drops the audit entries Import writes about itself and
// returns the rest of the export and how many it dropped.
// It also turns the audit entries an import marked as imported back into
// the entries they were, checking the marks.
func withoutImportAudit(t *testing.T, export string) (string, int) {
	t.Helper()
	var kept strings.Builder
	n := 0
	for _, l := range lines(export) {
		r := decodeRecord(t, l)
		if r.Type == engram.RecordAudit && r.Audit.Op == "import" {
			n++
			continue
		}
		if r.Type == engram.RecordAudit && strings.HasPrefix(r.Audit.Op, "import:") {
			m := importedRe.FindStringSubmatch(r.Audit.Detail)
			if m == nil || r.Audit.Actor != m[1] {
				t.Errorf("imported audit entry without its marks: %s", l)
				continue
			}
			r.Audit.Op, r.Audit.Actor, r.Audit.Detail = strings.TrimPrefix(r.Audit.Op, "import:"), m[2], m[3]
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			l = string(b)
		}
		kept.WriteString(l + "\n")
	}
	return kept.String(), n
}

var importedRe = regexp.MustCompile(`^imported by "(.*?)", naming actor "(.*?)"(?:: (.*))?$`)
