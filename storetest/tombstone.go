package storetest

import (
	"testing"

	"github.com/engramhq/engram"
)

// testPurgeTombstones: PurgeMemory clears the detail of its user's audit
// entries naming the memory, PurgeScope that of every entry in the scope;
// op, actor, time and ids stay, and entries of other memories and users
// keep their detail.
func testPurgeTombstones(t *testing.T, open Opener) {
	st := open(t)
	m1, m2, m3 := Memory(nsU1, "Grete zieht nach Lissabon"), Memory(nsU1, "kept"), Memory(nsU2, "other user")
	withDetail := func(a *engram.AuditEntry, d string) *engram.AuditEntry { a.Detail = d; return a }
	a1 := withDetail(Audit(nsU1, "memory.update", m1.ID), "Grete zieht nach Lissabon, not Porto")
	a2 := withDetail(Audit(nsU1, "memory.update", m2.ID), "typo 拼写")
	a3 := withDetail(Audit(nsU2, "memory.update", m3.ID), "sí")
	Put(t, st, m1, m2, m3, a1, a2, a3)

	details := func(s engram.Scope) map[string]engram.AuditEntry {
		out := map[string]engram.AuditEntry{}
		for _, a := range listAudit(t, st, s, engram.AuditFilter{}) {
			out[a.ID] = a
		}
		return out
	}
	check := func(step string, s engram.Scope, want map[string]string) {
		t.Helper()
		got := details(s)
		for id, d := range want {
			a, ok := got[id]
			if !ok {
				t.Fatalf("%s: audit entry %s is gone; a tombstone must stay", step, id)
			}
			if a.Detail != d || a.Op != "memory.update" || a.Actor != "tester" || len(a.IDs) != 1 || !a.At.Equal(T0) {
				t.Errorf("%s: entry %s = %q %s %s %v %v, want detail %q and the rest kept", step, id, a.Detail, a.Op, a.Actor, a.IDs, a.At, d)
			}
		}
	}

	update(t, st, func(tx engram.Tx) error { return tx.PurgeMemory(ctx, nsU1, m1.ID) })
	check("after PurgeMemory", scU1, map[string]string{a1.ID: "", a2.ID: a2.Detail})

	update(t, st, func(tx engram.Tx) error { _, err := tx.PurgeScope(ctx, scU1); return err })
	check("after PurgeScope", scU1, map[string]string{a1.ID: "", a2.ID: ""})
	check("another user", engram.ScopeOf(nsU2), map[string]string{a3.ID: a3.Detail})
}
