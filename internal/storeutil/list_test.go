package storeutil_test

import (
	"errors"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// listScope is the scope the list helpers' tests hand on.
var listScope = engram.Scope{Org: "o", Project: "p", User: "u"}

func TestListMemoriesPagesThroughTheStatement(t *testing.T) {
	ids := []string{engram.NewID(), engram.NewID(), engram.NewID()}
	var gotAfter []string
	var gotN []int
	build := func(s engram.Scope, f *engram.MemoryFilter, after string, n int) (string, []any, error) {
		if s != listScope {
			t.Errorf("build got scope %+v, want %+v", s, listScope)
		}
		gotAfter, gotN = append(gotAfter, after), append(gotN, n)
		return "page", []any{after, n}, nil
	}
	// read serves the ids below after, newest (last made) first.
	read := func(sql string, args []any) ([]engram.Memory, error) {
		after, n := args[0].(string), args[1].(int)
		var out []engram.Memory
		for i := len(ids) - 1; i >= 0 && len(out) < n; i-- {
			if after == "" || ids[i] < after {
				out = append(out, engram.Memory{ID: ids[i]})
			}
		}
		return out, nil
	}
	page, next, err := storeutil.ListMemories(listScope, engram.MemoryFilter{Limit: 2}, build, read)
	if err != nil || len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] || next == "" {
		t.Fatalf("first page = %v, %q, %v; want the two newest and a cursor", page, next, err)
	}
	page, next, err = storeutil.ListMemories(listScope, engram.MemoryFilter{Limit: 2, Cursor: next}, build, read)
	if err != nil || len(page) != 1 || page[0].ID != ids[0] || next != "" {
		t.Fatalf("second page = %v, %q, %v; want the oldest and no cursor", page, next, err)
	}
	if gotAfter[0] != "" || gotAfter[1] != ids[1] || gotN[0] != 3 || gotN[1] != 3 {
		t.Errorf("build was asked for (after, n) = %q %v; want first page then after %s, limit+1 each", gotAfter, gotN, ids[1])
	}
	if _, _, err := storeutil.ListMemories(listScope, engram.MemoryFilter{}, build, read); err != nil || gotN[2] != engram.DefaultLimit+1 {
		t.Errorf("no limit: %v, asked for %d; want engram.DefaultLimit+1", err, gotN[2])
	}
}

func TestListMemoriesRefusesBeforeTheStatement(t *testing.T) {
	build := func(engram.Scope, *engram.MemoryFilter, string, int) (string, []any, error) {
		t.Fatal("build called for a bad request")
		return "", nil, nil
	}
	read := func(string, []any) ([]engram.Memory, error) {
		t.Fatal("read called for a bad request")
		return nil, nil
	}
	episodeCursor := storeutil.EncodeEpisodeCursor(1, engram.NewID())
	for name, f := range map[string]engram.MemoryFilter{
		"negative limit":        {Limit: -1},
		"limit above maximum":   {Limit: engram.MaxLimit + 1},
		"malformed cursor":      {Cursor: "%%%"},
		"another list's cursor": {Cursor: episodeCursor},
	} {
		if _, _, err := storeutil.ListMemories(listScope, f, build, read); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
}

func TestListMemoriesReturnsTheBackendsErrors(t *testing.T) {
	bad := errors.New("backend failed")
	read := func(string, []any) ([]engram.Memory, error) { return nil, nil }
	failBuild := func(engram.Scope, *engram.MemoryFilter, string, int) (string, []any, error) { return "", nil, bad }
	if _, _, err := storeutil.ListMemories(listScope, engram.MemoryFilter{}, failBuild, read); !errors.Is(err, bad) {
		t.Errorf("a failed statement: %v, want it as is", err)
	}
	build := func(engram.Scope, *engram.MemoryFilter, string, int) (string, []any, error) { return "", nil, nil }
	failRead := func(string, []any) ([]engram.Memory, error) { return []engram.Memory{{ID: "x"}}, bad }
	if out, next, err := storeutil.ListMemories(listScope, engram.MemoryFilter{}, build, failRead); !errors.Is(err, bad) || out != nil || next != "" {
		t.Errorf("a failed read: %v, %q, %v; want nothing and the error as is", out, next, err)
	}
}

func TestListEpisodesResumesAfterTheLastEpisode(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
	episodes := []engram.Episode{{ID: engram.NewID(), OccurredAt: at}, {ID: engram.NewID(), OccurredAt: at.Add(time.Minute)}}
	var gotAfter []storeutil.EpisodeAfter
	build := func(_ engram.Scope, f *engram.EpisodeFilter, after storeutil.EpisodeAfter, n int) (string, []any, error) {
		if f.Speaker != "ana" {
			t.Errorf("build got filter %+v, want the caller's", f)
		}
		gotAfter = append(gotAfter, after)
		return "page", []any{n}, nil
	}
	read := func(_ string, args []any) ([]engram.Episode, error) {
		return episodes[:min(len(episodes), args[0].(int))], nil
	}
	f := engram.EpisodeFilter{Speaker: "ana", Limit: 1}
	page, next, err := storeutil.ListEpisodes(listScope, f, build, read)
	if err != nil || len(page) != 1 || page[0].ID != episodes[0].ID || next == "" {
		t.Fatalf("first page = %v, %q, %v; want the first episode and a cursor", page, next, err)
	}
	f.Cursor = next
	if _, _, err := storeutil.ListEpisodes(listScope, f, build, read); err != nil {
		t.Fatal(err)
	}
	want := []storeutil.EpisodeAfter{{}, {Micros: at.UnixMicro(), ID: episodes[0].ID}}
	if len(gotAfter) != 2 || gotAfter[0] != want[0] || gotAfter[1] != want[1] {
		t.Errorf("build was asked after %+v, want %+v", gotAfter, want)
	}
	f.Cursor = storeutil.EncodeCursor('m', engram.NewID())
	if _, _, err := storeutil.ListEpisodes(listScope, f, build, read); engram.ErrorCode(err) != engram.EINVALID || len(gotAfter) != 2 {
		t.Errorf("a memory cursor: %v (build called %d times); want EINVALID before build", err, len(gotAfter))
	}
}
