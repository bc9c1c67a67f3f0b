package postgres_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/postgres"
	"github.com/engramhq/engram/storetest"
)

// TestScanVectorsPages: ScanVectors reads a scope's memories a page of
// ids at a time; every vector of an active memory comes back exactly once
// whatever the page size, also when a whole page of memories has no
// vector, when a page ends between a memory's two vectors' rows, and at
// the last page's edge.
func TestScanVectorsPages(t *testing.T) {
	db := openFresh(t, postgres.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	other := engram.Namespace{Org: "acme", Project: "app", User: "u2"}
	var ms []*engram.Memory
	for i := range 14 {
		ms = append(ms, storetest.Memory(ns, fmt.Sprintf("memory %d", i)))
	}
	slices.SortFunc(ms, func(a, b *engram.Memory) int { return strings.Compare(a.ID, b.ID) })
	ms[8].Status = engram.StatusDeleted
	stranger := storetest.Memory(other, "another user's")
	recs := []any{stranger}
	for _, m := range ms {
		recs = append(recs, m)
	}
	storetest.Put(t, db, recs...)

	want := map[string][]float32{}
	err := db.Update(ctx, func(tx engram.Tx) error {
		vw := tx
		if err := vw.PutVectors(ctx, other, stranger.ID, "e", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{9, 9}}}); err != nil {
			return err
		}
		for i, m := range ms {
			if i >= 3 && i <= 6 {
				continue // the second page of three holds no vector
			}
			fvs := []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{float32(i), 1}}}
			if i%2 == 0 {
				fvs = append(fvs, engram.FieldVector{Field: engram.FieldAbstraction, Vec: []float32{1, float32(i)}})
			}
			if err := vw.PutVectors(ctx, ns, m.ID, "e", fvs); err != nil {
				return err
			}
			if m.Status == engram.StatusActive {
				for _, fv := range fvs {
					want[m.ID+"/"+fv.Field] = fv.Vec
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, page := range []int{1, 2, 3, 4, 13, 14, 100} {
		postgres.SetVectorPage(db, page)
		got := map[string][]float32{}
		err := db.View(ctx, func(r engram.Reader) error {
			return r.ScanVectors(ctx, engram.ScopeOf(ns), "e", func(rec engram.VectorRecord) error {
				k := rec.MemoryID + "/" + rec.Field
				if _, dup := got[k]; dup {
					return fmt.Errorf("%s read twice", k)
				}
				if rec.Namespace != ns {
					return fmt.Errorf("%s in namespace %v", k, rec.Namespace)
				}
				got[k] = rec.Vec
				return nil
			})
		})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if len(got) != len(want) {
			t.Errorf("page %d: %d vectors, want %d", page, len(got), len(want))
		}
		for k, v := range want {
			if !slices.Equal(got[k], v) {
				t.Errorf("page %d: %s = %v, want %v", page, k, got[k], v)
			}
		}
	}
}

// TestPurgeScopeOutlastsStatementTimeout: a dump's and a purge's
// statements are not cut off by the statement timeout, which would roll the whole purge back
// however often it was retried. Here the timeout is 5 ms and the scope's
// 1,500 memories take far longer than that to delete (0.4 s on a 2-core VM).
func TestPurgeScopeOutlastsStatementTimeout(t *testing.T) {
	u := emptiedURL(t)
	db := openAt(t, u, postgres.Options{})
	ns := engram.Namespace{Org: "acme", Project: "app", User: "u1"}
	const n = 1500
	err := db.Update(ctx, func(tx engram.Tx) error {
		for i := range n {
			m := storetest.Memory(ns, fmt.Sprintf("memory %d", i))
			if err := tx.InsertMemory(ctx, m); err != nil {
				return err
			}
			v := make([]float32, 64)
			v[i%64] = 1
			if err := tx.PutVectors(ctx, ns, m.ID, "e", []engram.FieldVector{{Field: engram.FieldValue, Vec: v}}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	hasty := openAt(t, u, postgres.Options{StatementTimeout: 5 * time.Millisecond, SkipMigrations: true})
	// A dump (engram migrate-store) reads each table in one statement.
	dumped := 0
	err = hasty.View(ctx, func(r engram.Reader) error {
		return r.Dump(ctx, func(d engram.DumpRecord) error {
			if d.Memory != nil {
				dumped++
				time.Sleep(10 * time.Microsecond)
			}
			return nil
		})
	})
	if err != nil || dumped != n {
		t.Fatalf("dump: %d memories, %v; want %d", dumped, err, n)
	}
	var c engram.PurgeCounts
	start := time.Now()
	err = hasty.Update(ctx, func(tx engram.Tx) error {
		c, err = tx.PurgeScope(ctx, engram.ScopeOf(ns))
		return err
	})
	t.Logf("purge took %v", time.Since(start))
	if err != nil || c.Memories != n {
		t.Fatalf("purge: %+v, %v; want %d memories", c, err, n)
	}
	err = db.View(ctx, func(r engram.Reader) error {
		ms, _, err := r.ListMemories(ctx, engram.ScopeOf(ns), engram.MemoryFilter{Limit: 10})
		if err == nil && len(ms) > 0 {
			err = fmt.Errorf("%d memories left", len(ms))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
