package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// testIdentityExport: IdentityExportPage gives every identity record of
// one user, kind by kind, in pages whose cursors resume exactly after the
// last record, as written (events of a deleted identity too); another
// user's and another tenant's records never come; a bad kind, limit or
// cursor is EINVALID. IdentityOwners lists every owner once.
func testIdentityExport(t *testing.T, open Opener) {
	st := open(t)
	alice := engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	bob := engram.Namespace{Org: "acme", Project: "app", User: "bob"}
	other := engram.Namespace{Org: "globex", Project: "app", User: "alice"}
	want := map[string][]string{} // alice's records by kind, as JSON
	var deleted string
	for _, n := range []engram.Namespace{alice, bob, other} {
		var recs []engram.Record
		for _, m := range []string{"face", "voice"} {
			recs = append(recs, engram.Record{Type: engram.RecordModality, Modality: &engram.EmbeddingModality{Namespace: n, Name: m, Dim: 3, CreatedAt: At(0)}})
		}
		for k := 0; k < 3; k++ {
			p := &engram.Person{ID: engram.NewID(), Namespace: n, Name: fmt.Sprintf("Person %d 张", k), Aliases: []string{"P"}, Source: engram.PersonAsserted, CreatedAt: At(0), UpdatedAt: At(time.Second)}
			i := &engram.Identity{ID: engram.NewID(), Namespace: n, Modality: "face", Centroid: []float32{1, float32(k), 0.5}, Count: 2, PersonID: p.ID, CreatedAt: At(0), UpdatedAt: At(time.Minute)}
			recs = append(recs, engram.Record{Type: engram.RecordPerson, Person: p}, engram.Record{Type: engram.RecordIdentity, Identity: i})
			for j := 0; j < 2; j++ {
				o := &engram.Observation{ID: engram.NewID(), Namespace: n, Modality: "face", Embedding: []float32{1, float32(j), 0.25}, IdentityID: i.ID, At: At(time.Duration(j) * time.Second)}
				if j == 0 {
					o.EpisodeID, o.Span = engram.NewID(), &engram.MediaSpan{StartMS: 5, EndMS: 50}
				}
				recs = append(recs, engram.Record{Type: engram.RecordObservation, Observation: o})
			}
			ev := &engram.IdentityEvent{ID: engram.NewID(), Namespace: n, Op: engram.IdentityCreate, Identities: []string{i.ID}, Source: "cluster", At: At(time.Hour)}
			recs = append(recs, engram.Record{Type: engram.RecordIdentityEvent, IdentityEvent: ev})
		}
		err := idUpdate(st, func(w engram.IdentityWriter) error {
			for _, r := range recs {
				var err error
				switch {
				case r.Modality != nil:
					err = w.PutModality(ctx, r.Modality)
				case r.Person != nil:
					err = w.PutPerson(ctx, r.Person)
				case r.Identity != nil:
					err = w.PutIdentity(ctx, r.Identity)
				case r.Observation != nil:
					err = w.InsertObservation(ctx, r.Observation)
				case r.IdentityEvent != nil:
					err = w.InsertIdentityEvent(ctx, r.IdentityEvent)
				}
				if err != nil {
					return err
				}
			}
			if n != alice {
				return nil
			}
			// The last identity goes with its observations; its event stays.
			deleted = recs[len(recs)-4].Identity.ID
			return w.DeleteIdentity(ctx, n, deleted)
		})
		if err != nil {
			t.Fatalf("write identities of %+v: %v", n, err)
		}
		if n != alice {
			continue
		}
		for _, r := range recs {
			if (r.Identity != nil && r.Identity.ID == deleted) || (r.Observation != nil && r.Observation.IdentityID == deleted) {
				continue
			}
			b, _ := json.Marshal(r)
			want[r.Type] = append(want[r.Type], string(b))
		}
	}

	sa := engram.ScopeOf(alice)
	err := st.View(ctx, func(r engram.Reader) error {
		for _, kind := range engram.IdentityRecords {
			var got []string
			pages := 0
			for after := ""; ; pages++ {
				page, next, err := r.IdentityExportPage(ctx, sa, kind, after, 2)
				if err != nil {
					return fmt.Errorf("%s page %d: %w", kind, pages, err)
				}
				for _, rec := range page {
					b, _ := json.Marshal(rec)
					got = append(got, string(b))
				}
				if next == "" {
					break
				}
				after = next
			}
			if len(got) != len(want[kind]) || pages < len(want[kind])/2-1 {
				t.Errorf("%s: %d records in %d pages, want %d:\n%v", kind, len(got), pages+1, len(want[kind]), got)
				continue
			}
			for _, g := range got {
				found := false
				for _, w := range want[kind] {
					found = found || g == w
				}
				if !found {
					t.Errorf("%s: exported %s, which alice did not write (or not so)", kind, g)
				}
			}
		}
		_, next, err := r.IdentityExportPage(ctx, sa, engram.RecordPerson, "", 1)
		if err != nil || next == "" {
			return fmt.Errorf("first page of persons: next %q, %v", next, err)
		}
		for name, call := range map[string]func() error{
			"unknown kind":     func() error { _, _, err := r.IdentityExportPage(ctx, sa, engram.RecordMemory, "", 2); return err },
			"limit 0":          func() error { _, _, err := r.IdentityExportPage(ctx, sa, engram.RecordPerson, "", 0); return err },
			"another's cursor": func() error { _, _, err := r.IdentityExportPage(ctx, sa, engram.RecordIdentity, next, 2); return err },
			"garbage cursor":   func() error { _, _, err := r.IdentityExportPage(ctx, sa, engram.RecordIdentity, "%%%", 2); return err },
		} {
			if err := call(); engram.ErrorCode(err) != engram.EINVALID {
				t.Errorf("%s: %v, want %s", name, err, engram.EINVALID)
			}
		}
		var owners []engram.Namespace
		if err := r.IdentityOwners(ctx, func(n engram.Namespace) error { owners = append(owners, n); return nil }); err != nil {
			return err
		}
		if len(owners) != 3 || owners[0] != alice || owners[1] != bob || owners[2] != other {
			t.Errorf("IdentityOwners = %+v, want alice, bob, and alice of globex", owners)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
