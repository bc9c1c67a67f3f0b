package engine

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/engramhq/engram"
)

// opScope is where a batch of memory operations acts: the memories it
// adds are stored in home, and the memories it targets (UPDATE, MERGE,
// SUPERSEDE, DELETE, CONFLICT) must be ones holds admits.
//
// For formation the reach is the user's across sessions (see formScope):
// what a person says in one session changes what they said in another
// ("I left Acme, I work at Siemens now" ends the employer of a sitting a
// month before). It never reaches another user's or another agent's
// memories, and a namespace without a user reaches only its own session:
// there the session is all that tells one anonymous speaker from the
// next.
type opScope struct {
	home engram.Namespace
	wide bool // targets in any session of home's user and agent
}

// inNamespace is the reach of a write by a client: targets in the scope
// of ns itself (engram.ScopeOf), new memories in ns.
func inNamespace(ns engram.Namespace) opScope { return opScope{home: ns} }

// formScope is the reach of formation for turns said in ns: with a user,
// every session of ns's user and agent (the agent matched exactly, none
// when ns has none); without one, ns's scope alone.
func formScope(ns engram.Namespace) opScope { return opScope{home: ns, wide: ns.User != ""} }

// reach returns the scope the store is read in: with wide, every session
// of home's user, and only home's agent, none when home has none
// (engram.Scope.ExactAgent), so the store itself leaves out what o does
// not hold.
func (o opScope) reach() engram.Scope {
	s := engram.ScopeOf(o.home)
	if o.wide {
		s.Session, s.ExactAgent = "", true
	}
	return s
}

// holds reports whether a memory of namespace n may be read and targeted.
func (o opScope) holds(n engram.Namespace) bool { return o.reach().Contains(n) }

// target finds the memory id an operation targets and returns the scope
// of its own namespace, in which the operation then changes it. It fails
// with ENOTFOUND, as for an id that never existed, when the memory is
// not within reach, and with the store's errors.
func (o opScope) target(ctx context.Context, r engram.Reader, id string) (engram.Scope, error) {
	if err := engram.CheckID("memory", id); err != nil {
		return engram.Scope{}, err
	}
	m, err := r.GetMemory(ctx, o.reach(), id)
	if err != nil {
		return engram.Scope{}, err
	}
	if !o.holds(m.Namespace) {
		return engram.Scope{}, engram.Errorf(engram.ENOTFOUND, "memory %s not found", id)
	}
	return engram.ScopeOf(m.Namespace), nil
}

// keep returns the memories of ms that o holds.
func (o opScope) keep(ms []engram.Memory) []engram.Memory {
	out := ms[:0:0]
	for i := range ms {
		if o.holds(ms[i].Namespace) {
			out = append(out, ms[i])
		}
	}
	return out
}

// applyOps carries out memory operations inside tx where o says, and
// returns the memories added or changed. It fails, naming the operation
// at fault, with the first operation's error; nothing is then written.
func (e *writer) applyOps(ctx context.Context, tx engram.Tx, vb *vecBatch, o opScope, ops []engram.MemoryOp, actor string, now time.Time) ([]engram.Memory, error) {
	var out []engram.Memory
	var added []string
	for i, op := range ops {
		ms, err := e.applyOp(ctx, tx, vb, o, op, actor, now)
		if err != nil {
			return nil, prefixed(fmt.Sprintf("memories[%d]", i), err)
		}
		if op.Op == engram.OpAdd {
			added = append(added, ms[0].ID)
		}
		out = append(out, ms...)
	}
	if len(added) > 0 {
		if err := tx.InsertAudit(ctx, e.audit(o.home, actor, "memory.add", added, "", now)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// applyOp carries out one operation of the decision model and returns the
// memories it added or changed; the write's trail notes it.
func (e *writer) applyOp(ctx context.Context, tx engram.Tx, vb *vecBatch, o opScope, op engram.MemoryOp, actor string, now time.Time) ([]engram.Memory, error) {
	if engram.IsProfile(&op.Memory) {
		var err error
		if o, op, err = profileOp(ctx, tx, o, op); err != nil {
			return nil, err
		}
	}
	ms, err := e.applyDecided(ctx, tx, vb, o, op, actor, now)
	if err == nil {
		noteOp(ctx, o.home, op, ms, actor)
	}
	return ms, err
}

// applyDecided carries out op, decided where o says, as applyOp says: a
// targeted operation changes its target in the target's own namespace,
// and what it adds goes to o.home.
func (e *writer) applyDecided(ctx context.Context, tx engram.Tx, vb *vecBatch, o opScope, op engram.MemoryOp, actor string, now time.Time) ([]engram.Memory, error) {
	switch op.Op {
	case engram.OpAdd:
		m := op.Memory
		m.Namespace = o.home
		if err := prepareNew(&m, now); err != nil {
			return nil, err
		}
		return []engram.Memory{m}, e.insertNew(ctx, tx, vb, &m, actor, op.Reason, now)
	case "", engram.OpNoop:
		return nil, nil
	case engram.OpUpdate, engram.OpMerge, engram.OpSupersede, engram.OpDelete, engram.OpConflict:
		ts, err := o.target(ctx, tx, op.TargetID)
		if err != nil {
			return nil, err
		}
		return e.applyTargeted(ctx, tx, vb, ts, o.home, op, actor, now)
	}
	return nil, engram.Errorf(engram.EINTERNAL, "unknown memory operation %q", op.Op)
}

// applyTargeted carries out op on its target, in ts, the scope of the
// target's namespace; a memory op adds (SUPERSEDE, CONFLICT) goes to home.
func (e *writer) applyTargeted(ctx context.Context, tx engram.Tx, vb *vecBatch, ts engram.Scope, home engram.Namespace, op engram.MemoryOp, actor string, now time.Time) ([]engram.Memory, error) {
	switch op.Op {
	case engram.OpUpdate, engram.OpMerge:
		m, err := e.update(ctx, tx, vb, ts, op.TargetID, contentPatch(op.Memory, op.Reason), op.Op, actor, now)
		if err != nil {
			return nil, err
		}
		return []engram.Memory{*m}, nil
	case engram.OpSupersede:
		req := engram.SupersedeRequest{New: op.Memory, At: op.Memory.ValidFrom, Reason: op.Reason}
		old, err := getActive(ctx, tx, ts, op.TargetID, "a supersede")
		if err != nil {
			return nil, err
		}
		r, err := e.replace(ctx, tx, vb, old, home, req, actor, now)
		if err != nil {
			return nil, err
		}
		return []engram.Memory{r.Old, r.New}, nil
	case engram.OpDelete:
		m, err := e.softDelete(ctx, tx, vb, ts, op.TargetID, op.Reason, actor, now)
		if err != nil {
			return nil, err
		}
		return []engram.Memory{*m}, nil
	}
	return e.conflict(ctx, tx, vb, ts, home, op, actor, now)
}

// profileOp moves an ADD or UPDATE of a profile memory to the profile
// scope of o's user (engram.ProfileScope), so a user keeps one profile
// whatever session or agent the turns come in: an ADD when the user has a
// profile already becomes an UPDATE of it, and an UPDATE must target that
// profile. Other operations stay where o says. It fails with ENOTFOUND
// when an UPDATE targets anything but the user's profile, and with the
// store's errors.
func profileOp(ctx context.Context, tx engram.Tx, o opScope, op engram.MemoryOp) (opScope, engram.MemoryOp, error) {
	if op.Op != engram.OpAdd && op.Op != engram.OpUpdate {
		return o, op, nil
	}
	s := engram.ScopeOf(o.home)
	ps := engram.ProfileScope(s)
	cur, err := engram.UserProfile(ctx, tx, s)
	switch {
	case err != nil:
		return o, op, err
	case op.Op == engram.OpAdd && cur != nil:
		op.Op, op.TargetID = engram.OpUpdate, cur.ID
	case op.Op == engram.OpUpdate && (cur == nil || cur.ID != op.TargetID):
		return o, op, engram.Errorf(engram.ENOTFOUND, "target_id: %s is not the profile of this user", op.TargetID)
	}
	return inNamespace(ps.Namespace()), op, nil
}

// conflict adds op's memory to home and marks it and op.TargetID, which
// must be active in ts, as the two sides of a new open conflict named
// after the new memory.
func (e *writer) conflict(ctx context.Context, tx engram.Tx, vb *vecBatch, ts engram.Scope, home engram.Namespace, op engram.MemoryOp, actor string, now time.Time) ([]engram.Memory, error) {
	old, err := getActive(ctx, tx, ts, op.TargetID, "a conflict")
	if err != nil {
		return nil, err
	}
	m := op.Memory
	m.Namespace = home
	m.Metadata = maps.Clone(m.Metadata)
	if err := prepareNew(&m, now); err != nil {
		return nil, err
	}
	mark := func(md map[string]any) map[string]any {
		if md == nil {
			md = map[string]any{}
		}
		md[engram.MetaConflict], md[engram.MetaConflictState] = m.ID, engram.ConflictOpen
		return md
	}
	m.Metadata = mark(m.Metadata)
	if err := e.insertNew(ctx, tx, vb, &m, actor, op.Reason, now); err != nil {
		return nil, err
	}
	o := clone(old)
	o.Metadata = mark(o.Metadata)
	o.Version, o.UpdatedAt = old.Version+1, now
	if err := e.writeVersion(ctx, tx, vb, old, o, engram.OpConflict, actor, op.Reason, now); err != nil {
		return nil, err
	}
	return []engram.Memory{*o, m}, nil
}
