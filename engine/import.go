package engine

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram"
)

// MaxImport is the most records one Import call takes; larger exports are
// imported in several calls (the CLI does this).
const MaxImport = 100_000

// Import implements engram.Service.
func (e *Engine) Import(ctx context.Context, s engram.Scope, recs []engram.Record) (*engram.ImportResult, error) {
	s, err := writeScope(s)
	if err != nil {
		return nil, err
	}
	if len(recs) > MaxImport {
		return nil, engram.Errorf(engram.ETOOLARGE, "%d records in one import, more than the limit of %d", len(recs), MaxImport)
	}
	for i := range recs {
		if err := checkRecord(s, &recs[i]); err != nil {
			return nil, prefixed(fmt.Sprintf("record %d", i+1), err)
		}
	}
	vb := e.vec.batch()
	var active []engram.Memory
	for _, r := range recs {
		if r.Type == engram.RecordMemory && r.Memory.Status == engram.StatusActive {
			active = append(active, *r.Memory)
		}
	}
	if err := vb.prepare(ctx, active); err != nil {
		return nil, err
	}
	res := &engram.ImportResult{}
	actor, now := engram.ActorFrom(ctx), e.clock()
	err = e.store.Update(ctx, func(tx engram.Tx) error {
		*res = engram.ImportResult{}
		for i := range recs {
			if err := importOne(ctx, tx, vb, &recs[i], res); err != nil {
				return prefixed(fmt.Sprintf("record %d", i+1), err)
			}
		}
		detail := fmt.Sprintf("imported %d episodes, %d memories, %d versions, %d audit entries; skipped %d",
			res.Episodes, res.Memories, res.Versions, res.Audit, res.Skipped)
		return tx.InsertAudit(ctx, e.audit(s.Namespace(), actor, "import", nil, detail, now))
	})
	if err := vb.done(err); err != nil {
		return nil, err
	}
	return res, nil
}

// checkRecord validates an imported record and normalises its times.
func checkRecord(s engram.Scope, r *engram.Record) error {
	n, err := r.Namespace()
	if err != nil {
		return err
	}
	if !s.Contains(n) {
		return engram.Errorf(engram.EINVALID, "%s belongs to namespace %s/%s user %q agent %q session %q, outside the import scope",
			r.Type, n.Org, n.Project, n.User, n.Agent, n.Session)
	}
	switch r.Type {
	case engram.RecordEpisode:
		ep := r.Episode
		if ep.ID == "" {
			return engram.Errorf(engram.EINVALID, "episode has no id")
		}
		ep.OccurredAt, ep.ReceivedAt = norm(ep.OccurredAt), norm(ep.ReceivedAt)
		return ep.Validate()
	case engram.RecordMemory:
		return checkStoredMemory(r.Memory)
	case engram.RecordVersion:
		v := r.Version
		if !engram.ValidID(v.MemoryID) || v.Version < 1 {
			return engram.Errorf(engram.EINVALID, "version needs a valid memory_id and a version number from 1")
		}
		switch v.Op {
		case engram.OpAdd, engram.OpUpdate, engram.OpSupersede, engram.OpDelete, engram.OpRestore:
		default:
			return engram.Errorf(engram.EINVALID, "version op %q is not one of ADD, UPDATE, SUPERSEDE, DELETE, RESTORE", v.Op)
		}
		v.At = norm(v.At)
		for _, m := range []*engram.Memory{v.Old, v.New} {
			if m != nil {
				if err := checkStoredMemory(m); err != nil {
					return err
				}
			}
		}
		return nil
	case engram.RecordAudit:
		a := r.Audit
		if !engram.ValidID(a.ID) || a.Op == "" {
			return engram.Errorf(engram.EINVALID, "audit entry needs a valid id and an op")
		}
		a.At = norm(a.At)
		return nil
	}
	return engram.Errorf(engram.EINVALID, "unknown record type %q", r.Type)
}

func checkStoredMemory(m *engram.Memory) error {
	if m.ID == "" || m.Version < 1 || !m.Status.Valid() || !m.Kind.Valid() {
		return engram.Errorf(engram.EINVALID, "memory needs an id, a kind, a status and a version from 1")
	}
	m.CreatedAt, m.UpdatedAt = norm(m.CreatedAt), norm(m.UpdatedAt)
	m.ValidFrom, m.ValidTo, m.ExpiredAt = normPtr(m.ValidFrom), normPtr(m.ValidTo), normPtr(m.ExpiredAt)
	m.ExpiresAt, m.LastAccessed = normPtr(m.ExpiresAt), normPtr(m.LastAccessed)
	return m.Validate()
}

// importOne stores one record unless an identical one is stored; a different
// stored record with the same id is a conflict.
func importOne(ctx context.Context, tx engram.Tx, vb *vecBatch, r *engram.Record, res *engram.ImportResult) error {
	switch r.Type {
	case engram.RecordEpisode:
		ep := r.Episode
		old, err := tx.GetEpisode(ctx, engram.ScopeOf(ep.Namespace), ep.ID)
		if err == nil {
			return skipIfSame(old, ep, "episode", ep.ID, res)
		} else if !engram.IsNotFound(err) {
			return err
		}
		res.Episodes++
		return tx.InsertEpisode(ctx, ep)
	case engram.RecordMemory:
		m := r.Memory
		old, err := tx.GetMemory(ctx, engram.ScopeOf(m.Namespace), m.ID)
		if err == nil {
			return skipIfSame(old, m, "memory", m.ID, res)
		} else if !engram.IsNotFound(err) {
			return err
		}
		res.Memories++
		if err := tx.InsertMemory(ctx, m); err != nil {
			return err
		}
		return vb.stage(ctx, tx, m)
	case engram.RecordVersion:
		v := r.Version
		vs, err := tx.Versions(ctx, engram.ScopeOf(v.Namespace), v.MemoryID)
		if err != nil && !engram.IsNotFound(err) {
			return err
		}
		for i := range vs {
			if vs[i].Version == v.Version {
				return skipIfSame(&vs[i], v, "version", fmt.Sprintf("%s@%d", v.MemoryID, v.Version), res)
			}
		}
		res.Versions++
		return tx.InsertVersion(ctx, v)
	case engram.RecordAudit:
		err := tx.InsertAudit(ctx, r.Audit)
		if engram.ErrorCode(err) == engram.ECONFLICT {
			res.Skipped++ // audit entries are immutable: the same id is the same entry
			return nil
		}
		if err == nil {
			res.Audit++
		}
		return err
	}
	return engram.Errorf(engram.EINVALID, "unknown record type %q", r.Type)
}

func skipIfSame(stored, incoming any, what, id string, res *engram.ImportResult) error {
	a, _ := json.Marshal(stored)
	b, _ := json.Marshal(incoming)
	if string(a) != string(b) {
		return engram.Errorf(engram.ECONFLICT, "%s %s exists with different content", what, id)
	}
	res.Skipped++
	return nil
}
