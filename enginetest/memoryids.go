package enginetest

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// testMemoryIDsOfOthers: a memory id another user of the tenant holds
// behaves exactly like a free one, through the library and over HTTP. An
// add and an import with it succeed as they do with a fresh id (the same
// answer, 201 over HTTP, nothing renamed); every read, update, history,
// search and delete by either user then reaches only their own memory.
// (An add with another user's memory id answered 409 "already exists",
// and an import renamed the memory, telling the caller the id was in use.)
func testMemoryIDsOfOthers(t *testing.T, open Open) {
	e := newEngine(t, open, engine.Options{})
	client, base := overHTTP(t, e)
	bobs, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsB, Memories: []engram.Memory{
		{ID: engram.NewID(), Value: "Bob drinks coffee in Porto."}, {ID: engram.NewID(), Value: "Bob plays chess on Sundays."}}})
	if err != nil || len(bobs) != 2 {
		t.Fatalf("bob's memories: %v, %v", bobs, err)
	}
	taken := [2]string{bobs[0].ID, bobs[1].ID}
	for _, via := range []struct {
		name, user string
		svc        engram.Service
	}{{"library", "alice", e}, {"http", "carol", client}} {
		t.Run(via.name, func(t *testing.T) {
			ns := engram.Namespace{Org: nsB.Org, Project: nsB.Project, User: via.user}
			checkTakenMemoryWrites(t, via.svc, ns, taken)
			checkTakenMemoryReads(t, via.svc, ns, taken)
		})
	}
	t.Run("status", func(t *testing.T) { checkTakenMemoryStatus(t, base, taken[0]) })
	for i, want := range []string{"Bob drinks coffee in Porto.", "Bob plays chess on Sundays."} {
		m, err := e.GetMemory(ctx, scB, taken[i])
		if err != nil || m.Value != want || m.Version != 1 {
			t.Errorf("bob's memory %s = %+v, %v; want his own, unchanged", taken[i], m, err)
		}
		if vs, err := e.History(ctx, scB, taken[i]); err != nil || len(vs) != 1 {
			t.Errorf("bob's history of %s = %+v, %v; want his one version", taken[i], vs, err)
		}
	}
}

// checkTakenMemoryWrites adds in ns a memory with a fresh id and one with
// taken[0], imports one with a fresh id and one with taken[1], and wants
// the same answers for each pair.
func checkTakenMemoryWrites(t *testing.T, svc engram.Service, ns engram.Namespace, taken [2]string) {
	t.Helper()
	for _, c := range []struct{ id, value string }{{engram.NewID(), "Ich wohne in Köln."}, {taken[0], "Je travaille à Lyon."}} {
		got, err := svc.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{ID: c.id, Value: c.value}}})
		if err != nil || len(got) != 1 || got[0].ID != c.id || got[0].Namespace != ns || got[0].Value != c.value {
			t.Fatalf("add memory %s = %+v, %v; want it stored under its id in %+v", c.id, got, err, ns)
		}
	}
	sc := engram.ScopeOf(ns)
	at := time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)
	for _, c := range []struct{ id, value string }{{engram.NewID(), "我住在上海。"}, {taken[1], "Trabajo en un hospital de Sevilla."}} {
		m := engram.Memory{ID: c.id, Namespace: ns, Kind: engram.KindSemantic, Value: c.value, Language: "es",
			Status: engram.StatusActive, Confidence: 1, Importance: 0.5, Version: 1, CreatedAt: at, UpdatedAt: at}
		v := engram.Version{MemoryID: c.id, Namespace: ns, Version: 1, Op: engram.OpAdd, New: &m, At: at}
		res, err := svc.Import(ctx, sc, []engram.Record{{Type: engram.RecordMemory, Memory: &m}, {Type: engram.RecordVersion, Version: &v}})
		if err != nil || res.Memories != 1 || res.Versions != 1 || len(res.Renamed) != 0 {
			t.Fatalf("import of memory %s = %+v, %v; want it stored under its id, renaming nothing", c.id, res, err)
		}
	}
}

// checkTakenMemoryReads: the memories ns holds under taken ids are ns's own
// in every read, search, update and history, and deleting one leaves the
// other user's.
func checkTakenMemoryReads(t *testing.T, svc engram.Service, ns engram.Namespace, taken [2]string) {
	t.Helper()
	sc := engram.ScopeOf(ns)
	for i, want := range []string{"Je travaille à Lyon.", "Trabajo en un hospital de Sevilla."} {
		m, err := svc.GetMemory(ctx, sc, taken[i])
		if err != nil || m.Value != want || m.Namespace != ns {
			t.Errorf("GetMemory %s = %+v, %v; want %q of %s", taken[i], m, err, want, ns.User)
		}
		if vs, err := svc.History(ctx, sc, taken[i]); err != nil || len(vs) != 1 || vs[0].Namespace.User != ns.User {
			t.Errorf("History of %s = %+v, %v; want %s's one version", taken[i], vs, err, ns.User)
		}
	}
	res, err := svc.Search(ctx, engram.SearchRequest{Scope: sc, Query: "Bob coffee Porto chess", K: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if h.Memory.Namespace.User != ns.User {
			t.Errorf("%s's search found %+v", ns.User, h.Memory)
		}
	}
	value := "Je travaille à Paris."
	if m, err := svc.UpdateMemory(ctx, sc, taken[0], engram.MemoryPatch{Value: &value}); err != nil || m.Value != value || m.Version != 2 {
		t.Errorf("update of %s = %+v, %v; want version 2 saying %q", taken[0], m, err, value)
	}
	if err := svc.DeleteMemory(ctx, sc, taken[1], engram.DeleteOptions{Hard: true}); err != nil {
		t.Fatalf("delete memory %s: %v", taken[1], err)
	}
	if _, err := svc.GetMemory(ctx, sc, taken[1]); code(err) != engram.ENOTFOUND {
		t.Errorf("GetMemory after its delete: %v, want ENOTFOUND", err)
	}
	p, err := svc.ListMemories(ctx, sc, engram.MemoryFilter{Limit: engram.MaxLimit})
	if err != nil || len(p.Memories) != 3 {
		t.Errorf("memories of %s = %+v, %v; want their 3 left", ns.User, p, err)
	}
}

// checkTakenMemoryStatus posts, as a raw client would, a memory with a
// fresh id and one with the taken id, and wants the same status and the
// same shape of answer.
func checkTakenMemoryStatus(t *testing.T, base, taken string) {
	t.Helper()
	post := func(id, value string) (int, []map[string]any) {
		t.Helper()
		body := `{"namespace": {"org": "acme", "project": "p", "user": "dave"}, "memories": [{"id": "` + id +
			`", "value": "` + value + `", "language": "und"}]}`
		resp, err := http.Post(base+"/v1/memories", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var out struct {
			Memories []map[string]any `json:"memories"`
		}
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("answer %s: %v", raw, err)
		}
		return resp.StatusCode, out.Memories
	}
	freshStatus, fresh := post(engram.NewID(), "Vivo en Sevilla.")
	takenStatus, same := post(taken, "Ich wohne in Köln.")
	if freshStatus != http.StatusCreated || takenStatus != freshStatus || len(fresh) != 1 || len(same) != 1 {
		t.Fatalf("add with a fresh id: %d %v, with another user's id: %d %v; want 201 both", freshStatus, fresh, takenStatus, same)
	}
	if a, b := slices.Sorted(maps.Keys(fresh[0])), slices.Sorted(maps.Keys(same[0])); !slices.Equal(a, b) {
		t.Errorf("answer with a fresh id has %v, with another user's id %v", a, b)
	}
}
