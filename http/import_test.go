package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	engramhttp "github.com/engramhq/engram/http"
)

// TestEngine_ImportForeignIDs imports, as alice, records whose ids bob's
// memory has, through the real server: a version alone is refused (it
// would freeze bob's memory), and a memory with its version answers like
// one with a free id and leaves bob's memory as it was.
func TestEngine_ImportForeignIDs(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{})
	ctx := context.Background()
	nsA := engram.Namespace{Org: "o", Project: "p", User: "alice"}
	nsB := engram.Namespace{Org: "o", Project: "p", User: "bob"}
	bobs, err := env.c.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: nsB, Memories: []engram.Memory{{Value: "Bob's memory."}}})
	if err != nil {
		t.Fatal(err)
	}
	bob := bobs[0]

	post := func(recs ...engram.Record) (int, map[string]any) {
		t.Helper()
		var body bytes.Buffer
		for _, r := range recs {
			if err := json.NewEncoder(&body).Encode(r); err != nil {
				t.Fatal(err)
			}
		}
		resp, err := http.Post(env.srv.URL+"/v1/import?org=o&project=p&user=alice", engramhttp.NDJSONType, &body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("import answer %s: %v", b, err)
		}
		return resp.StatusCode, out
	}
	at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	records := func(id string) []engram.Record {
		m := &engram.Memory{ID: id, Namespace: nsA, Kind: engram.KindSemantic, Value: "Alice's memory.", Confidence: 1, Importance: 0.5,
			Status: engram.StatusActive, CreatedAt: at, UpdatedAt: at, Version: 1}
		return []engram.Record{
			{Type: engram.RecordMemory, Memory: m},
			{Type: engram.RecordVersion, Version: &engram.Version{MemoryID: id, Namespace: nsA, Version: 1, Op: engram.OpAdd, New: m, At: at}},
		}
	}

	status, out := post(records(bob.ID)[1])
	if msg, _ := out["error"].(map[string]any)["message"].(string); status != 400 || !strings.Contains(msg, "version of memory "+bob.ID+" which this import does not hold") {
		t.Errorf("import of a version of bob's memory = %d %v, want 400 naming the record", status, out)
	}

	freeStatus, free := post(records(engram.NewID())...)
	takenStatus, taken := post(records(bob.ID)...)
	keys := func(m map[string]any) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	if freeStatus != 200 || takenStatus != freeStatus || !reflect.DeepEqual(keys(free), keys(taken)) {
		t.Errorf("import of a free id = %d %v, of bob's id = %d %v; want the same status and shape", freeStatus, free, takenStatus, taken)
	}
	for _, k := range []string{"episodes", "memories", "versions", "audit", "skipped"} {
		if free[k] != taken[k] {
			t.Errorf("%s: free id %v, bob's id %v", k, free[k], taken[k])
		}
	}

	// An imported audit entry is marked as such and attributed to the
	// importer (this test's requests name no actor: the server's default).
	forged := &engram.AuditEntry{ID: engram.NewID(), Namespace: nsA, Actor: "root", Op: "memory.update", Detail: "forged", At: at}
	if status, out := post(engram.Record{Type: engram.RecordAudit, Audit: forged}); status != 200 {
		t.Fatalf("import of an audit entry = %d %v", status, out)
	}
	ap, err := env.c.Audit(ctx, engram.ScopeOf(nsA), engram.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var seen, imports int
	for _, a := range ap.Entries {
		switch {
		case a.ID == forged.ID:
			seen++
			if a.Op != "import:memory.update" || a.Actor == "root" || !strings.Contains(a.Detail, `naming actor "root": forged`) {
				t.Errorf("imported audit entry = %+v, want it marked as imported", a)
			}
		case a.Op == "import":
			imports++
		case strings.HasPrefix(a.Op, "import:"):
		default:
			t.Errorf("audit entry %+v is neither the server's import entry nor marked as imported", a)
		}
	}
	if seen != 1 || imports != 3 {
		t.Errorf("audit of alice = %d imported entries, %d import entries; want 1 and 3", seen, imports)
	}

	got, err := env.c.GetMemory(ctx, engram.ScopeOf(nsB), bob.ID)
	if err != nil || got.Value != bob.Value || got.Version != 1 {
		t.Fatalf("bob's memory after the imports = %+v, %v", got, err)
	}
	v := "Bob's memory, updated."
	if _, err := env.c.UpdateMemory(ctx, engram.ScopeOf(nsB), bob.ID, engram.MemoryPatch{Value: &v}); err != nil {
		t.Errorf("bob's update after the imports: %v", err)
	}
	if err := env.c.DeleteMemory(ctx, engram.ScopeOf(nsB), bob.ID, engram.DeleteOptions{}); err != nil {
		t.Errorf("bob's delete after the imports: %v", err)
	}
}
