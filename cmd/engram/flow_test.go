package main_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

func TestLocalFlow(t *testing.T) {
	t.Parallel()
	testFlow(t, localCLI(t, filepath.Join(t.TempDir(), "data")))
}

func TestServerFlow(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	env := baseEnv(t)
	srv := startServer(t, dir, env)

	resp, err := http.Get(srv.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got, want := resp.StatusCode, http.StatusOK; got != want {
		t.Fatalf("GET /healthz: status %d, want %d", got, want)
	}

	c := &cli{t: t, env: env, extra: []string{"--server", srv.url}}
	ids := testFlow(t, c)

	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d after SIGTERM, want 0\n%s", code, srv.logs.String())
	}
	if !strings.Contains(srv.logs.String(), "shut down") {
		t.Errorf("serve logs do not report the shutdown:\n%s", srv.logs.String())
	}

	// Everything acknowledged over HTTP is in the data directory.
	local := &cli{t: t, env: env, extra: []string{"--data", dir}}
	var page engram.MemoryPage
	local.json(&page, "list", "--user", "ann")
	if got, want := memoryIDs(page.Memories), ids.active; !equalSets(got, want) {
		t.Errorf("after shutdown, local list = %v, want %v", got, want)
	}
	var eps engram.EpisodePage
	local.json(&eps, "list", "--episodes", "--user", "ann")
	if got, want := len(eps.Episodes), 2; got != want {
		t.Errorf("after shutdown, %d episodes, want %d", got, want)
	}
}

// flowIDs are what testFlow leaves behind.
type flowIDs struct {
	active []string // ids of the active memories of user ann
}

// testFlow runs add → list → search → get → update → history → rollback →
// delete → restore → hard delete through c, in whichever mode c is.
func testFlow(t *testing.T, c *cli) flowIDs {
	// Episodes, formed into memories.
	var added engram.AddEpisodesResult
	c.json(&added, "add", "--user", "ann", "--role", "user", "--speaker", "Ann",
		"--occurred-at", "2024-05-01T10:00:00Z", "--meta", "channel=chat",
		"I moved to Lisbon in May", "My cat is called Miso")
	if got, want := len(added.Episodes), 2; got != want {
		t.Fatalf("add stored %d episodes, want %d", got, want)
	}
	ep := added.Episodes[0]
	if ep.Role != "user" || ep.Speaker != "Ann" || ep.Content != "I moved to Lisbon in May" ||
		ep.Namespace.User != "ann" || ep.Namespace.Org != "default" || ep.Namespace.Project != "default" ||
		ep.Metadata["channel"] != "chat" || !ep.OccurredAt.Equal(mustTime(t, "2024-05-01T10:00:00Z")) {
		t.Errorf("episode = %+v", ep)
	}
	if len(added.Memories) == 0 {
		t.Fatalf("add formed no memories")
	}

	// --no-form stores episodes only.
	var noForm engram.AddEpisodesResult
	c.json(&noForm, "add", "--user", "zed", "--no-form", "just an episode")
	if got, want := len(noForm.Episodes), 1; got != want {
		t.Errorf("add --no-form stored %d episodes, want %d", got, want)
	}
	if got := len(noForm.Memories); got != 0 {
		t.Errorf("add --no-form formed %d memories, want 0", got)
	}

	// A memory added directly.
	var mem struct{ Memories []engram.Memory }
	c.json(&mem, "add", "--memory", "--user", "ann", "--kind", "semantic", "--abstraction", "Ann's coffee",
		"--cue", "coffee", "--cue", "drink", "--confidence", "0.9", "--meta", "n=3", "--meta", "tag=taste",
		"Ann drinks flat whites")
	if got, want := len(mem.Memories), 1; got != want {
		t.Fatalf("add --memory stored %d memories, want %d", got, want)
	}
	m := mem.Memories[0]
	if m.Kind != engram.KindSemantic || m.Abstraction != "Ann's coffee" || strings.Join(m.Cues, ",") != "coffee,drink" ||
		m.Value != "Ann drinks flat whites" || m.Confidence != 0.9 || m.Metadata["n"] != 3.0 || m.Metadata["tag"] != "taste" ||
		m.Status != engram.StatusActive || m.Version != 1 {
		t.Errorf("added memory = %+v", m)
	}
	id := m.ID

	// Human list: one line per memory, starting with its id.
	wantIDs := append(memoryIDs(added.Memories), id)
	out := c.ok("list", "--user", "ann")
	if got, want := len(lines(out)), len(wantIDs); got != want {
		t.Fatalf("list printed %d lines, want %d:\n%s", got, want, out)
	}
	for _, l := range lines(out) {
		if !containsString(wantIDs, strings.Fields(l)[0]) {
			t.Errorf("list line %q does not start with a memory id", l)
		}
	}
	var page engram.MemoryPage
	c.json(&page, "list", "--user", "ann", "--meta", "n=3")
	if got, want := memoryIDs(page.Memories), []string{id}; !equalSets(got, want) {
		t.Errorf("list --meta n=3 = %v, want %v", got, want)
	}
	c.json(&page, "list", "--user", "ann", "--meta", `n="3"`)
	if got := len(page.Memories); got != 0 {
		t.Errorf("list --meta n=\"3\" matched %d memories; a string must not match the number 3", got)
	}
	c.json(&page, "list", "--user", "ann", "--kind", "semantic")
	// The direct memory, and the fact the former drew from "I moved to Lisbon".
	semantic := []string{id}
	for _, fm := range added.Memories {
		if fm.Kind == engram.KindSemantic {
			semantic = append(semantic, fm.ID)
		}
	}
	if got, want := memoryIDs(page.Memories), semantic; !equalSets(got, want) || len(want) != 2 {
		t.Errorf("list --kind semantic = %v, want %v", got, want)
	}
	// Another user sees none of ann's memories.
	c.json(&page, "list", "--user", "bob")
	if got := len(page.Memories); got != 0 {
		t.Errorf("bob lists %d memories, want 0", got)
	}

	out = c.ok("list", "--episodes", "--user", "ann")
	if got := lines(out); len(got) != 2 || !strings.HasPrefix(got[0], ep.ID) || !strings.Contains(got[0], "user Ann: I moved to Lisbon in May") {
		t.Errorf("list --episodes =\n%s", out)
	}

	// Search, with flags after the query.
	var sr engram.SearchResult
	c.json(&sr, "search", "--user", "ann", "flat whites", "-k", "5", "--explain")
	if len(sr.Hits) == 0 || sr.Hits[0].Memory.ID != id {
		t.Fatalf("search flat whites: hits %+v, want %s first", sr.Hits, id)
	}
	if len(sr.Hits[0].Explain) == 0 {
		t.Errorf("search --explain: no channel explanation")
	}
	out = c.ok("search", "--user", "ann", "Lisbon", "--explain")
	if got := lines(out); len(got) < 2 || !strings.Contains(got[0], "Lisbon") || !strings.Contains(got[1], "rank 1") {
		t.Errorf("search Lisbon --explain =\n%s", out)
	}
	c.json(&sr, "search", "--user", "bob", "flat whites")
	if got := len(sr.Hits); got != 0 {
		t.Errorf("bob's search found %d of ann's memories", got)
	}

	// Get.
	out = c.ok("get", "--user", "ann", id)
	for _, want := range []string{"id:", id, "value:", "Ann drinks flat whites", "cues:", "coffee, drink", "meta.n:", "3"} {
		if !strings.Contains(out, want) {
			t.Errorf("get output lacks %q:\n%s", want, out)
		}
	}
	var gotEp engram.Episode
	c.json(&gotEp, "get", "--episode", "--user", "ann", ep.ID)
	if gotEp.ID != ep.ID || gotEp.Content != ep.Content {
		t.Errorf("get --episode = %+v", gotEp)
	}

	// Update, history, rollback.
	var upd engram.Memory
	c.json(&upd, "update", "--user", "ann", id, "--value", "Ann drinks espresso", "--cue", "espresso", "--reason", "changed taste")
	if upd.Value != "Ann drinks espresso" || strings.Join(upd.Cues, ",") != "espresso" || upd.Version != 2 || upd.Abstraction != "Ann's coffee" {
		t.Errorf("updated memory = %+v", upd)
	}
	var hist []engram.Version
	c.json(&hist, "history", "--user", "ann", id)
	if got, want := versionOps(hist), "1:ADD 2:UPDATE"; got != want {
		t.Fatalf("history = %s, want %s", got, want)
	}
	if hist[1].Reason != "changed taste" || hist[1].Actor != "cli" {
		t.Errorf("update version reason %q actor %q, want %q %q", hist[1].Reason, hist[1].Actor, "changed taste", "cli")
	}
	out = c.ok("history", "--user", "ann", id)
	if got := lines(out); len(got) != 2 || !strings.HasPrefix(got[0], "v1") || !strings.Contains(got[1], "UPDATE") || !strings.Contains(got[1], "(changed taste)") {
		t.Errorf("history =\n%s", out)
	}
	var rb engram.Memory
	c.json(&rb, "rollback", "--user", "ann", id, "--version", "1", "--actor", "tester")
	if rb.Value != "Ann drinks flat whites" || strings.Join(rb.Cues, ",") != "coffee,drink" || rb.Version != 3 {
		t.Errorf("rolled back memory = %+v", rb)
	}
	c.json(&hist, "history", "--user", "ann", id)
	if got := len(hist); got != 3 || hist[2].Actor != "tester" {
		t.Errorf("after rollback: %d versions, last by %q; want 3 by tester", got, hist[len(hist)-1].Actor)
	}

	// Soft delete, restore, hard delete.
	out = c.ok("delete", "--user", "ann", id)
	if !strings.Contains(out, "deleted memory "+id) {
		t.Errorf("delete printed %q", out)
	}
	c.json(&page, "list", "--user", "ann")
	if containsString(memoryIDs(page.Memories), id) {
		t.Errorf("soft-deleted memory still listed")
	}
	var got engram.Memory
	c.json(&got, "get", "--user", "ann", id)
	if got.Status != engram.StatusDeleted {
		t.Errorf("after delete, status %q, want deleted", got.Status)
	}
	c.json(&page, "list", "--user", "ann", "--status", "deleted")
	if got, want := memoryIDs(page.Memories), []string{id}; !equalSets(got, want) {
		t.Errorf("list --status deleted = %v, want %v", got, want)
	}
	c.json(&got, "restore", "--user", "ann", id, "--reason", "oops")
	if got.Status != engram.StatusActive {
		t.Errorf("after restore, status %q, want active", got.Status)
	}
	c.ok("delete", "--user", "ann", "--hard", id)
	missing := engram.NewID()
	notFound := strings.ReplaceAll(c.fail(1, "get", "--user", "ann", missing), missing, "ID")
	if !strings.HasPrefix(notFound, "engram: ") || !strings.Contains(notFound, "not found") {
		t.Errorf("get of a missing id: stderr %q", notFound)
	}
	if got := strings.ReplaceAll(c.fail(1, "get", "--user", "ann", id), id, "ID"); got != notFound {
		t.Errorf("get of a purged memory: stderr %q, want %q", got, notFound)
	}
	c.fail(1, "history", "--user", "ann", id)

	// Another tenant's id answers exactly like a missing one.
	other := added.Memories[0].ID
	if got := strings.ReplaceAll(c.fail(1, "get", "--user", "bob", other), other, "ID"); got != notFound {
		t.Errorf("bob getting ann's memory: stderr %q, want %q", got, notFound)
	}
	if got := strings.ReplaceAll(c.fail(1, "get", "--project", "p2", "--user", "ann", other), other, "ID"); got != notFound {
		t.Errorf("another project getting ann's memory: stderr %q, want %q", got, notFound)
	}
	if got := strings.ReplaceAll(c.fail(1, "delete", "--user", "bob", "--hard", other), other, "ID"); got != notFound {
		t.Errorf("bob deleting ann's memory: stderr %q, want %q", got, notFound)
	}
	c.json(&got, "get", "--user", "ann", other)
	if got.ID != other || got.Status != engram.StatusActive {
		t.Errorf("ann's memory after bob's delete attempt: %+v", got)
	}

	return flowIDs{active: memoryIDs(added.Memories)}
}

func memoryIDs(ms []engram.Memory) []string {
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].ID
	}
	return ids
}

func versionOps(vs []engram.Version) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%d:%s", v.Version, v.Op))
	}
	return strings.Join(parts, " ")
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func equalSets(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]int{}
	for _, x := range a {
		seen[x]++
	}
	for _, x := range b {
		if seen[x] == 0 {
			return false
		}
		seen[x]--
	}
	return true
}
