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

// TestEngine_ImportLimits sends import bodies, as NDJSON and as a JSON
// array, over each of the limits through the real server: more records
// than MaxImportRecords, one record longer than MaxBodyBytes, a body longer
// than MaxImportBytes; each is refused with 413 naming the limit, a
// malformed body with 400, and nothing of a refused body is stored.
func TestEngine_ImportLimits(t *testing.T) {
	env := newEngineEnv(t, engramhttp.ServerOptions{MaxImportRecords: 3, MaxBodyBytes: 8 << 10, MaxImportBytes: 16 << 10})
	ns := engram.Namespace{Org: "o", Project: "p", User: "lena"}
	url := env.srv.URL + "/v1/import?org=o&project=p&user=lena"
	at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	ep := func(content string) string {
		return mustJSON(t, engram.Record{Type: engram.RecordEpisode, Episode: &engram.Episode{
			ID: engram.NewID(), Namespace: ns, Role: "user", Content: content, OccurredAt: at, ReceivedAt: at}})
	}
	lines := func(recs ...string) string { return strings.Join(recs, "\n") + "\n" }
	array := func(recs ...string) string { return "[" + strings.Join(recs, ",\n") + "]" }
	long := strings.Repeat("长", 4000) // 12000 bytes
	for _, c := range []struct {
		name, ctype, body string
		status            int
		msg               string
	}{
		{"lines over the record limit", engramhttp.NDJSONType, lines(ep("eins"), ep("dos"), ep("三"), ep("four")), 413, "more than 3 records"},
		{"array over the record limit", "application/json", array(ep("eins"), ep("dos"), ep("三"), ep("four")), 413, "more than 3 records"},
		{"line over the record bytes", engramhttp.NDJSONType, lines(ep("kurz"), ep(long)), 413, "line 2 is longer than the limit of 8192 bytes"},
		{"item over the record bytes", "application/json", array(ep("kurz"), ep(long)), 413, "request body [1] is longer than the limit of 8192 bytes"},
		{"body over the import bytes", engramhttp.NDJSONType, lines(ep(long[:6000]), ep(long[:6000]), ep(long[:6000])), 413, "larger than the limit of 16384 bytes"},
		{"array cut short", "application/json", "[" + ep("a") + ",", 400, "request body"},
		{"data after the array", "application/json", array(ep("a")) + " {}", 400, "more data after the JSON array"},
		{"bad item", "application/json", array(ep("a"), `{"type":"episode","episode":{"id":7}}`), 400, "request body [1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, "POST", url, c.body, "Content-Type", c.ctype)
			if r.Status != c.status {
				t.Fatalf("status %d %s, want %d", r.Status, r.Body, c.status)
			}
			if e := errorOf(t, r); !strings.Contains(e.Error.Message, c.msg) {
				t.Errorf("message %q does not contain %q", e.Error.Message, c.msg)
			}
			if n := exportCount(t, env, ns); n != 0 {
				t.Errorf("a refused import stored %d records", n)
			}
		})
	}

	for _, body := range []struct{ ctype, body string }{
		{engramhttp.NDJSONType, lines(ep("eins"), ep("dos"), ep("三"))},
		{"application/json", array(ep("eins"), ep("dos"), ep("三"))},
	} {
		r := do(t, "POST", url, body.body, "Content-Type", body.ctype)
		var res engram.ImportResult
		if err := json.Unmarshal(r.Body, &res); r.Status != 200 || err != nil || res.Episodes != 3 {
			t.Fatalf("import of 3 records as %s = %d %s", body.ctype, r.Status, r.Body)
		}
	}
	if n := exportCount(t, env, ns); n != 6+2 { // and the server's two "import" audit entries
		t.Errorf("after two imports of 3 the export holds %d records, want 8", n)
	}
}

func exportCount(t *testing.T, env *engineEnv, ns engram.Namespace) int {
	t.Helper()
	n := 0
	if err := env.c.Export(context.Background(), engram.ScopeOf(ns), func(engram.Record) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
