package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

// TestQueryPlans pins the index use the vector and maintenance queries were
// designed for, so that a schema or query change that makes one of them
// scan a table fails here instead of only getting slow.
func TestQueryPlans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plans.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	plan := func(q string, args ...any) string {
		t.Helper()
		return queryPlan(t, db, q, args...)
	}
	type check struct {
		name string
		plan string
		want []string
	}
	var checks []check
	for _, s := range scopeShapes() {
		q, args := scanVectorsSQL(s)
		checks = append(checks, check{fmt.Sprintf("ScanVectors %+v", s), plan(q, append(args, "active", "e")...), []string{
			"SEARCH m USING INDEX memories_by_status (org=? AND project=? AND user_id=? AND status=?)",
			"SEARCH v USING INDEX sqlite_autoindex_memory_vectors_1 (org=? AND project=? AND user_id=? AND memory_id=? AND embedder=?)",
		}})
		q, args = getMemoriesSQL(s, 3)
		checks = append(checks, check{fmt.Sprintf("GetMemories %+v", s), plan(q, append(args, "a", "b", "c")...), []string{
			"AND id=?)",
		}})
	}
	checks = append(checks,
		check{"ScanMemories", plan(scanMemoriesSQL, "o", "p", "u", "id", 10), []string{
			"SEARCH m USING INDEX sqlite_autoindex_memories_1 ((org,project,user_id,id)>(?,?,?,?))",
		}},
		check{"PutVectors delete", plan(deleteEmbeddingsSQL, "o", "p", "u", "id", "e"), []string{
			"memory_vectors USING COVERING INDEX sqlite_autoindex_memory_vectors_1 (org=? AND project=? AND user_id=? AND memory_id=? AND embedder=?)",
		}},
	)
	// Formation's lookup of a batch's fingerprints reads the index of the
	// key, not every memory of the user.
	fq, fargs, err := listMemoriesSQL(engram.Scope{Org: "o", Project: "p", User: "u"}, &engram.MemoryFilter{
		Kinds: []engram.Kind{engram.KindEpisodic}, Limit: engram.MaxLimit,
		MetadataIn: map[string][]any{engram.MetaFingerprint: {"fp1", "fp2", "fp3"}}}, "", engram.MaxLimit+1)
	if err != nil {
		t.Fatal(err)
	}
	// (The few memories found are sorted by id: no scan.)
	if fp := plan(fq, fargs...); !strings.Contains(fp, "SEARCH m USING INDEX memories_by_fingerprint (org=? AND project=? AND user_id=? AND <expr>=?)") || strings.Contains(fp, "SCAN ") {
		t.Errorf("ListMemories by fingerprint: plan\n%s\ndoes not look the fingerprints up in their index", fp)
	}
	// A flush of reads looks each distinct id up by key, once: counting the
	// list per updated row made a flush of thousands of reads quadratic.
	touchPlan := plan(touchSQL, 1, "o", "p", `["a","b"]`, 2, "u")
	if want := "INDEX sqlite_autoindex_memories_1 (org=? AND project=? AND user_id=? AND id=?)"; !strings.Contains(touchPlan, want) ||
		strings.Contains(touchPlan, "CORRELATED") || strings.Contains(touchPlan, "SCAN memories") {
		t.Errorf("Touch: plan\n%s\ndoes not contain %q or counts per row", touchPlan, want)
	}
	// A search's candidate list, bound as one JSON array, is looked up by
	// the key, not scanned. (The result is sorted: the list is unordered.)
	w := &where{}
	w.addScope("m.", scopeShapes()[0])
	if err := memoryFilter(w, &engram.MemoryFilter{IDs: []string{engram.NewID(), engram.NewID()}}); err != nil {
		t.Fatal(err)
	}
	idsPlan := plan("SELECT "+storeutil.MemoryCols+" FROM memories m WHERE "+w.String()+" ORDER BY m.id DESC LIMIT ?", append(w.args, 10)...)
	if want := "AND id=?)"; !strings.Contains(idsPlan, "SEARCH m USING INDEX") || !strings.Contains(idsPlan, want) || strings.Contains(idsPlan, "SCAN m") {
		t.Errorf("ListMemories by ids: plan\n%s\ndoes not contain %q or scans memories", idsPlan, want)
	}
	for _, c := range checks {
		for _, w := range c.want {
			if !strings.Contains(c.plan, w) {
				t.Errorf("%s: plan\n%s\ndoes not contain %q", c.name, c.plan, w)
			}
		}
		// Sorting in a temporary b-tree would mean ScanMemories reads every
		// remaining row before returning the first page.
		if strings.Contains(c.plan, "SCAN ") || strings.Contains(c.plan, "TEMP B-TREE") {
			t.Errorf("%s: plan\n%s\nscans or sorts", c.name, c.plan)
		}
	}
}

// queryPlan returns the steps of q's query plan on db, one per line.
func queryPlan(t *testing.T, db *DB, q string, args ...any) string {
	t.Helper()
	rows, err := db.write.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("explain %q: %v", q, err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(steps, "\n")
}
