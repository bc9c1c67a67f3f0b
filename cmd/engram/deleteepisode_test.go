package main_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

// TestDeleteEpisodeOutput: `engram delete --episode` says which memories
// it removed with the episode, in text and in JSON, and they are gone.
func TestDeleteEpisodeOutput(t *testing.T) {
	t.Parallel()
	c := localCLI(t, filepath.Join(t.TempDir(), "data"))
	var res engram.AddEpisodesResult
	c.json(&res, "add", "--user", "ann", "Ich habe einen Beagle namens Rufus adoptiert.")
	if len(res.Episodes) != 1 || len(res.Memories) == 0 {
		t.Fatalf("add = %+v, want one episode and its memories", res)
	}
	var ids []string
	for _, m := range res.Memories {
		ids = append(ids, m.ID)
	}
	out := c.ok("delete", "--user", "ann", "--episode", res.Episodes[0].ID)
	if want := "purged episode " + res.Episodes[0].ID + "\nmemories removed: " + strings.Join(ids, ", ") + "\n"; out != want {
		t.Errorf("delete --episode printed %q, want %q", out, want)
	}
	for _, id := range ids {
		c.fail(1, "get", "--user", "ann", id)
	}

	c.json(&res, "add", "--user", "ann", "我们领养了一只小狗。")
	var got struct {
		Type    string   `json:"type"`
		ID      string   `json:"id"`
		Hard    bool     `json:"hard"`
		Removed []string `json:"removed"`
	}
	c.json(&got, "delete", "--user", "ann", "--episode", res.Episodes[0].ID)
	if got.Type != engram.RecordEpisode || got.ID != res.Episodes[0].ID || len(got.Removed) != len(res.Memories) ||
		!slices.Contains(got.Removed, res.Memories[0].ID) {
		t.Errorf("delete --episode --json = %+v, want the episode and its %d memories removed", got, len(res.Memories))
	}
}
