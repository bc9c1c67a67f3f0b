package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/engramhq/engram"
)

// dumpKinds is the order in which Dump returns the kinds of record.
var dumpKinds = []string{
	engram.RecordEpisode, engram.RecordMemory, engram.RecordVersion,
	engram.RecordAudit, engram.RecordVector, engram.RecordMeta,
}

// dumpKey returns the key Dump orders a record by, as strings compared
// byte by byte (the version number is zero-padded).
func dumpKey(t testing.TB, r engram.DumpRecord) []string {
	t.Helper()
	switch {
	case r.Type == engram.RecordEpisode && r.Episode != nil:
		n := r.Episode.Namespace
		return []string{n.Org, n.Project, r.Episode.ID, n.User}
	case r.Type == engram.RecordMemory && r.Memory != nil:
		n := r.Memory.Namespace
		return []string{n.Org, n.Project, r.Memory.ID, n.User}
	case r.Type == engram.RecordVersion && r.Version != nil:
		v := r.Version
		return []string{v.Namespace.Org, v.Namespace.Project, v.MemoryID, v.Namespace.User, fmt.Sprintf("%010d", v.Version)}
	case r.Type == engram.RecordAudit && r.Audit != nil:
		n := r.Audit.Namespace
		return []string{n.Org, n.Project, r.Audit.ID, n.User}
	case r.Type == engram.RecordVector && r.Vector != nil:
		v := r.Vector
		return []string{v.Namespace.Org, v.Namespace.Project, v.MemoryID, v.Namespace.User, v.Embedder, v.Field}
	case r.Type == engram.RecordMeta && r.Meta != nil:
		return []string{r.Meta.Key}
	}
	t.Fatalf("dump record of type %q does not match its payload", r.Type)
	return nil
}

func dumpAll(t testing.TB, st engram.Store) []engram.DumpRecord {
	t.Helper()
	var out []engram.DumpRecord
	view(t, st, func(r engram.Reader) error {
		return r.Dump(ctx, func(d engram.DumpRecord) error {
			out = append(out, d)
			return nil
		})
	})
	return out
}

// copyDump writes recs into st as a store migration would: records through
// the Tx methods, the vectors of one memory and embedder in one PutVectors.
func copyDump(t testing.TB, st engram.Store, recs []engram.DumpRecord) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error {
		for i := 0; i < len(recs); i++ {
			r := recs[i]
			var err error
			switch r.Type {
			case engram.RecordEpisode:
				err = tx.InsertEpisode(ctx, r.Episode)
			case engram.RecordMemory:
				err = tx.InsertMemory(ctx, r.Memory)
			case engram.RecordVersion:
				err = tx.InsertVersion(ctx, r.Version)
			case engram.RecordAudit:
				err = tx.InsertAudit(ctx, r.Audit)
			case engram.RecordVector:
				v := r.Vector
				fvs := []engram.FieldVector{{Field: v.Field, Vec: v.Vec}}
				for i+1 < len(recs) && recs[i+1].Type == engram.RecordVector && sameOwner(*recs[i+1].Vector, *v) {
					i++
					fvs = append(fvs, engram.FieldVector{Field: recs[i].Vector.Field, Vec: recs[i].Vector.Vec})
				}
				err = tx.PutVectors(ctx, v.Namespace, v.MemoryID, v.Embedder, fvs)
			case engram.RecordMeta:
				err = tx.SetMeta(ctx, r.Meta.Key, r.Meta.Value)
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
}

func sameOwner(a, b engram.StoredVector) bool {
	return a.Namespace.Org == b.Namespace.Org && a.Namespace.Project == b.Namespace.Project &&
		a.MemoryID == b.MemoryID && a.Embedder == b.Embedder
}

func testDump(t *testing.T, open Opener) {
	st := open(t)
	if got := dumpAll(t, st); len(got) != 0 {
		t.Errorf("Dump of an empty store gave %d records, first %+v", len(got), got[0])
	}

	// Tenants whose names order differently by bytes than by a
	// case-insensitive collation, and users, agents and sessions of each.
	tenants := []engram.Namespace{
		{Org: "acme", Project: "app", User: "u1"},
		{Org: "Acme", Project: "app", User: "u2", Agent: "a", Session: "s"},
		{Org: "acme", Project: "app2"},
		{Org: "ácme", Project: "App", User: "u1"},
	}
	want := map[string]any{} // by type and key
	keyOf := func(typ string, key []string) string { return fmt.Sprint(typ, key) }
	var recs []any
	var vecs []engram.StoredVector
	for i, ns := range tenants {
		for j := range 2 {
			e := Episode(ns, fmt.Sprintf("episode %d of tenant %d", j, i))
			m := Memory(ns, fmt.Sprintf("memory %d of tenant %d", j, i))
			if j == 1 {
				m.Status = engram.StatusDeleted // vectors and all are kept whatever the status
			}
			v := Version(m, 1, engram.OpAdd)
			a := Audit(ns, "add", m.ID)
			recs = append(recs, e, m, v, a)
			want[keyOf(engram.RecordEpisode, []string{ns.Org, ns.Project, e.ID, ns.User})] = e
			want[keyOf(engram.RecordMemory, []string{ns.Org, ns.Project, m.ID, ns.User})] = m
			want[keyOf(engram.RecordVersion, []string{ns.Org, ns.Project, m.ID, ns.User, "0000000001"})] = v
			want[keyOf(engram.RecordAudit, []string{ns.Org, ns.Project, a.ID, ns.User})] = a
			vecs = append(vecs,
				engram.StoredVector{Embedder: embA, VectorRecord: engram.VectorRecord{MemoryID: m.ID, Namespace: ns, Field: engram.FieldValue, Vec: vec(i*4+j, len(oddFloats))}},
				engram.StoredVector{Embedder: embA, VectorRecord: engram.VectorRecord{MemoryID: m.ID, Namespace: ns, Field: engram.FieldAbstraction, Vec: oddFloats}},
			)
			if j == 0 {
				vecs = append(vecs, engram.StoredVector{Embedder: embB, VectorRecord: engram.VectorRecord{MemoryID: m.ID, Namespace: ns, Field: engram.FieldValue, Vec: vec(100+i, 3)}})
			}
		}
	}
	Put(t, st, recs...)
	// PutVectors replaces every vector of a memory and embedder, so the
	// fields of one go in together (they are consecutive in vecs).
	for i := 0; i < len(vecs); {
		j := i + 1
		for j < len(vecs) && sameOwner(vecs[j], vecs[i]) {
			j++
		}
		var fvs []engram.FieldVector
		for _, v := range vecs[i:j] {
			fvs = append(fvs, engram.FieldVector{Field: v.Field, Vec: v.Vec})
		}
		putVectors(t, st, vecs[i].Namespace, vecs[i].MemoryID, vecs[i].Embedder, fvs...)
		i = j
	}
	for _, v := range vecs {
		v := v
		want[keyOf(engram.RecordVector, []string{v.Namespace.Org, v.Namespace.Project, v.MemoryID, v.Namespace.User, v.Embedder, v.Field})] = &v
	}
	metas := []engram.MetaEntry{{Key: "embedder", Value: embA}, {Key: "Zeta ✓", Value: "ünï\n"}}
	update(t, st, func(tx engram.Tx) error {
		for _, m := range metas {
			if err := tx.SetMeta(ctx, m.Key, m.Value); err != nil {
				return err
			}
		}
		return nil
	})
	for _, m := range metas {
		m := m
		want[keyOf(engram.RecordMeta, []string{m.Key})] = &m
	}

	got := dumpAll(t, st)
	if len(got) != len(want) {
		t.Errorf("Dump gave %d records, want %d", len(got), len(want))
	}
	seen := map[string]bool{}
	for i, r := range got {
		key := dumpKey(t, r)
		k := keyOf(r.Type, key)
		if seen[k] {
			t.Errorf("record %d %s dumped twice", i, k)
		}
		seen[k] = true
		w, ok := want[k]
		if !ok {
			t.Errorf("record %d %s was never stored", i, k)
			continue
		}
		var payload any
		switch r.Type {
		case engram.RecordEpisode:
			payload = r.Episode
		case engram.RecordMemory:
			payload = r.Memory
		case engram.RecordVersion:
			payload = r.Version
		case engram.RecordAudit:
			payload = r.Audit
		case engram.RecordVector:
			payload = r.Vector
			if wv := w.(*engram.StoredVector); !sameBits(r.Vector.Vec, wv.Vec) {
				t.Errorf("vector %s: bits changed: %v, want %v", k, r.Vector.Vec, wv.Vec)
			}
		case engram.RecordMeta:
			payload = r.Meta
		}
		sameJSON(t, "dumped "+k, payload, w)
		if i == 0 {
			continue
		}
		prev := got[i-1]
		pk, ck := slices.Index(dumpKinds, prev.Type), slices.Index(dumpKinds, r.Type)
		switch {
		case ck < pk:
			t.Errorf("record %d: a %s after a %s", i, r.Type, prev.Type)
		case ck == pk && slices.Compare(dumpKey(t, prev), key) >= 0:
			t.Errorf("record %d: %s %q does not follow %q in byte order", i, r.Type, key, dumpKey(t, prev))
		}
	}

	// An error from fn stops the dump and comes back as is.
	calls := 0
	err := st.View(ctx, func(r engram.Reader) error {
		return r.Dump(ctx, func(engram.DumpRecord) error { calls++; return errBoom })
	})
	if !errors.Is(err, errBoom) || calls != 1 {
		t.Errorf("Dump with a failing fn = %v after %d calls, want errBoom after 1", err, calls)
	}

	// What Dump gives is enough to rebuild the store exactly.
	st2 := open(t)
	copyDump(t, st2, got)
	if a, b := mustJSON(t, got), mustJSON(t, dumpAll(t, st2)); a != b {
		t.Errorf("a store rebuilt from a dump dumps differently:\n got %s\nwant %s", b, a)
	}
	full := engram.Scope{Org: "acme", Project: "app"}
	sameJSON(t, "export of a rebuilt tenant", exportAll(t, st2, full), exportAll(t, st, full))
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
