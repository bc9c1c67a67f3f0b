package main_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

func TestAddFromFile(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	c := localCLI(t, filepath.Join(tmp, "data"))
	file := writeFile(t, filepath.Join(tmp, "eps.jsonl"),
		`{"role":"user","speaker":"Ann","content":"first","occurred_at":"2024-02-01T09:00:00Z","metadata":{"n":1}}`+"\n"+
			"\n"+ // blank lines are skipped
			`{"role":"assistant","content":"second"}`+"\n")
	var res engram.AddEpisodesResult
	c.json(&res, "add", "--user", "ann", "--no-form", "--file", file, "an argument too")
	if got, want := len(res.Episodes), 3; got != want {
		t.Fatalf("add --file stored %d episodes, want %d", got, want)
	}
	byContent := map[string]engram.Episode{}
	for _, e := range res.Episodes {
		byContent[e.Content] = e
	}
	if e := byContent["first"]; e.Role != "user" || e.Speaker != "Ann" || e.Metadata["n"] != 1.0 ||
		!e.OccurredAt.Equal(mustTime(t, "2024-02-01T09:00:00Z")) {
		t.Errorf("first episode = %+v", e)
	}
	if e := byContent["second"]; e.Role != "assistant" {
		t.Errorf("second episode = %+v", e)
	}

	// From stdin, and memories from a file.
	c.stdin = `{"content":"from stdin"}` + "\n"
	c.json(&res, "add", "--user", "ann", "--no-form", "--file", "-")
	if len(res.Episodes) != 1 || res.Episodes[0].Content != "from stdin" {
		t.Errorf("add --file - = %+v", res.Episodes)
	}
	c.stdin = `{"kind":"procedural","value":"deploy with make deploy","cues":["deploy"]}` + "\n"
	var mems struct{ Memories []engram.Memory }
	c.json(&mems, "add", "--memory", "--user", "ann", "--file", "-")
	if len(mems.Memories) != 1 || mems.Memories[0].Kind != engram.KindProcedural || mems.Memories[0].Value != "deploy with make deploy" {
		t.Errorf("add --memory --file - = %+v", mems.Memories)
	}
	c.stdin = ""

	// After "--" everything is text, even what looks like a flag.
	c.json(&res, "add", "--user", "ann", "--no-form", "--", "--not-a-flag")
	if len(res.Episodes) != 1 || res.Episodes[0].Content != "--not-a-flag" {
		t.Errorf("add -- --not-a-flag = %+v", res.Episodes)
	}

	// delete --episode purges one episode.
	id := res.Episodes[0].ID
	if out := c.ok("delete", "--user", "ann", "--episode", id); !strings.Contains(out, "purged episode "+id) {
		t.Errorf("delete --episode printed %q", out)
	}
	c.fail(1, "get", "--user", "ann", "--episode", id)
}

func TestListPaging(t *testing.T) {
	t.Parallel()
	c := localCLI(t, filepath.Join(t.TempDir(), "data"))
	var want []string
	for _, v := range []string{"one", "two", "three", "four", "five"} {
		var mems struct{ Memories []engram.Memory }
		c.json(&mems, "add", "--memory", "--user", "ann", v)
		want = append(want, mems.Memories[0].ID)
	}

	r := c.run("list", "--user", "ann", "--limit", "2")
	if got := len(lines(r.stdout)); got != 2 {
		t.Fatalf("list --limit 2 printed %d lines", got)
	}
	cursor, ok := strings.CutPrefix(strings.TrimSpace(r.stderr), "more: --cursor ")
	if !ok || cursor == "" {
		t.Fatalf("list --limit 2: stderr %q, want the next cursor", r.stderr)
	}
	var seen []string
	for _, l := range lines(r.stdout) {
		seen = append(seen, strings.Fields(l)[0])
	}
	var page engram.MemoryPage
	c.json(&page, "list", "--user", "ann", "--limit", "2", "--cursor", cursor)
	if len(page.Memories) != 2 || page.Next == "" {
		t.Fatalf("second page: %d memories, next %q", len(page.Memories), page.Next)
	}
	seen = append(seen, memoryIDs(page.Memories)...)
	c.json(&page, "list", "--user", "ann", "--limit", "2", "--cursor", page.Next)
	seen = append(seen, memoryIDs(page.Memories)...)
	if page.Next != "" || !equalSets(seen, want) {
		t.Errorf("three pages gave %v (next %q), want %v", seen, page.Next, want)
	}

	r = c.run("list", "--user", "ann", "--limit", "2", "--all")
	if got := len(lines(r.stdout)); got != 5 || r.stderr != "" {
		t.Errorf("list --all printed %d lines and stderr %q, want 5 and nothing", got, r.stderr)
	}
	c.json(&page, "list", "--user", "ann", "--limit", "2", "--all")
	if !equalSets(memoryIDs(page.Memories), want) || page.Next != "" {
		t.Errorf("list --all --json = %v next %q", memoryIDs(page.Memories), page.Next)
	}
	c.json(&page, "list", "--user", "ann", "--contains", "THRE")
	if got := memoryIDs(page.Memories); len(got) != 1 || got[0] != want[2] {
		t.Errorf("list --contains THRE = %v, want [%s]", got, want[2])
	}
}

func TestSharedAndScopePurge(t *testing.T) {
	t.Parallel()
	c := localCLI(t, filepath.Join(t.TempDir(), "data"))
	var mems struct{ Memories []engram.Memory }
	c.json(&mems, "add", "--memory", "The office is closed on Fridays")
	shared := mems.Memories[0].ID
	c.json(&mems, "add", "--memory", "--user", "ann", "Ann works remotely")
	ann := mems.Memories[0].ID
	c.ok("add", "--user", "ann", "--session", "s1", "--no-form", "hello")
	c.json(&mems, "add", "--memory", "--user", "bob", "Bob works in the office")
	bob := mems.Memories[0].ID

	var page engram.MemoryPage
	c.json(&page, "list", "--user", "ann")
	if got, want := memoryIDs(page.Memories), []string{ann}; !equalSets(got, want) {
		t.Errorf("list --user ann = %v, want %v", got, want)
	}
	c.json(&page, "list", "--user", "ann", "--shared")
	if got, want := memoryIDs(page.Memories), []string{ann, shared}; !equalSets(got, want) {
		t.Errorf("list --user ann --shared = %v, want %v", got, want)
	}
	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "--shared", "office")
	if len(sr.Hits) != 1 || sr.Hits[0].Memory.ID != shared {
		t.Errorf("search office as ann with --shared: %+v, want only the shared memory", sr.Hits)
	}

	// A project-wide purge is refused by the service; ann's purge leaves
	// bob and the shared memory alone.
	c.fail(1, "delete", "--scope", "--yes")
	var counts engram.PurgeCounts
	c.json(&counts, "delete", "--scope", "--user", "ann", "--yes")
	if counts.Memories != 1 || counts.Episodes != 1 {
		t.Errorf("purge of ann = %+v, want 1 memory and 1 episode", counts)
	}
	c.json(&page, "list", "--user", "ann", "--shared")
	if got, want := memoryIDs(page.Memories), []string{shared}; !equalSets(got, want) {
		t.Errorf("after purge, ann sees %v, want %v", got, want)
	}
	var eps engram.EpisodePage
	c.json(&eps, "list", "--episodes", "--user", "ann")
	if len(eps.Episodes) != 0 {
		t.Errorf("after purge, ann has %d episodes", len(eps.Episodes))
	}
	c.json(&page, "list", "--user", "bob")
	if got, want := memoryIDs(page.Memories), []string{bob}; !equalSets(got, want) {
		t.Errorf("after ann's purge, bob has %v, want %v", got, want)
	}
}
