package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// queue runs fn with the job queue of a write transaction of st.
func queue(t *testing.T, st engram.Store, fn func(q engram.JobQueue) error) {
	t.Helper()
	update(t, st, func(tx engram.Tx) error {
		return fn(tx)
	})
}

// claim claims the next job at now for worker w1, nil for none.
func claim(t *testing.T, st engram.Store, now time.Time) *engram.Job {
	t.Helper()
	var j *engram.Job
	queue(t, st, func(q engram.JobQueue) (err error) {
		j, err = q.ClaimJob(ctx, "w1", now, time.Hour)
		return err
	})
	return j
}

func jobIDs(t *testing.T, st engram.Store, ns engram.Namespace, states ...engram.JobState) []string {
	t.Helper()
	var ids []string
	view(t, st, func(r engram.Reader) error {
		js, _, err := r.ListJobs(ctx, engram.ScopeOf(ns), engram.JobFilter{States: states})
		for _, j := range js {
			ids = append(ids, j.ID)
		}
		return err
	})
	return ids
}

// testJobSkip: a claim leaves the jobs of the tenants it is told to skip,
// however old, and takes them once it is not.
func testJobSkip(t *testing.T, open Opener) {
	st := open(t)
	older := &engram.Job{ID: engram.NewID(), Namespace: nsU1, Episodes: []string{engram.NewID()}, State: engram.JobQueued,
		RunAfter: At(0), CreatedAt: At(0), UpdatedAt: At(0)}
	newer := *older
	newer.ID, newer.Namespace = engram.NewID(), nsOther
	queue(t, st, func(q engram.JobQueue) error {
		if err := q.EnqueueJob(ctx, older); err != nil {
			return err
		}
		return q.EnqueueJob(ctx, &newer)
	})
	var j *engram.Job
	queue(t, st, func(q engram.JobQueue) (err error) {
		j, err = q.ClaimJob(ctx, "w1", At(0), time.Hour, nsU1.Tenant(), "initech/app")
		return err
	})
	if j == nil || j.ID != newer.ID {
		t.Fatalf("claim skipping %s = %+v, want the other tenant's job", nsU1.Tenant(), j)
	}
	if j := claim(t, st, At(0)); j == nil || j.ID != older.ID {
		t.Fatalf("claim without skipping = %+v, want the skipped tenant's job", j)
	}
}

// testJobStates: a failed attempt leaves its job retrying with the error
// and the time of its next run, which a claim keeps to, as it keeps later
// jobs of the namespace waiting; a deferred run gives its attempt back;
// the retrying state is stored and filtered like the others.
func testJobStates(t *testing.T, open Opener) {
	st := open(t)
	newJob := func(ns engram.Namespace) *engram.Job {
		return &engram.Job{ID: engram.NewID(), Namespace: ns, Episodes: []string{engram.NewID()}, State: engram.JobQueued,
			RunAfter: At(0), CreatedAt: At(0), UpdatedAt: At(0)}
	}
	first, second, other := newJob(nsU1), newJob(nsU1), newJob(nsU2)
	queue(t, st, func(q engram.JobQueue) error {
		for _, j := range []*engram.Job{first, second, other} {
			if err := q.EnqueueJob(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	if j := claim(t, st, At(0)); j == nil || j.ID != first.ID || j.State != engram.JobRunning || j.Attempts != 1 {
		t.Fatalf("first claim = %+v, want the first job running, attempt 1", j)
	}
	if j := claim(t, st, At(0)); j == nil || j.ID != other.ID {
		t.Fatalf("second claim = %+v, want the other namespace's job (the second waits for the first)", j)
	}
	queue(t, st, func(q engram.JobQueue) error {
		retry := At(time.Minute)
		return q.FailJob(ctx, nsU1, first.ID, "w1", "upstream down", &retry, At(time.Second))
	})
	j := getJob(t, st, nsU1, first.ID)
	if j.State != engram.JobRetrying || j.LastError != "upstream down" || !j.RunAfter.Equal(At(time.Minute)) || j.Attempts != 1 || j.LeaseUntil != nil {
		t.Fatalf("after a failed attempt: %+v, want retrying at +1m with the error, 1 attempt, no lease", j)
	}
	if j := claim(t, st, At(30*time.Second)); j != nil {
		t.Fatalf("claim before the retry time = %+v, want none (the retrying job is not due, the second waits for it)", j)
	}
	if got := jobIDs(t, st, nsU1, engram.JobRetrying); len(got) != 1 || got[0] != first.ID {
		t.Errorf("retrying jobs = %v, want [%s]", got, first.ID)
	}
	if got := jobIDs(t, st, nsU1, engram.JobQueued); len(got) != 1 || got[0] != second.ID {
		t.Errorf("queued jobs = %v, want [%s]", got, second.ID)
	}
	if got := jobIDs(t, st, nsU2, engram.JobRetrying); len(got) != 0 {
		t.Errorf("retrying jobs of the other user = %v, want none", got)
	}
	if j := claim(t, st, At(time.Minute)); j == nil || j.ID != first.ID || j.Attempts != 2 {
		t.Fatalf("claim at the retry time = %+v, want the first job, attempt 2", j)
	}
	queue(t, st, func(q engram.JobQueue) error {
		return q.DeferJob(ctx, nsU1, first.ID, "w1", "model held off", At(2*time.Minute), At(time.Minute))
	})
	if j := getJob(t, st, nsU1, first.ID); j.State != engram.JobRetrying || j.Attempts != 1 || j.LastError != "model held off" || !j.RunAfter.Equal(At(2*time.Minute)) {
		t.Fatalf("after a deferral: %+v, want retrying at +2m, the attempt given back", j)
	}
	err := st.Update(ctx, func(tx engram.Tx) error {
		return tx.DeferJob(ctx, nsU1, first.ID, "w1", "again", At(3*time.Minute), At(time.Minute))
	})
	if engram.ErrorCode(err) != engram.ECONFLICT {
		t.Errorf("deferring a job that is not running: %v, want ECONFLICT", err)
	}
	if j := claim(t, st, At(2*time.Minute)); j == nil || j.ID != first.ID || j.Attempts != 2 {
		t.Fatalf("claim after the deferral = %+v, want the first job, attempt 2", j)
	}
	queue(t, st, func(q engram.JobQueue) error { return q.CompleteJob(ctx, nsU1, first.ID, "w1", At(2*time.Minute)) })
	if j := claim(t, st, At(2*time.Minute)); j == nil || j.ID != second.ID {
		t.Fatalf("claim after the first is done = %+v, want the second", j)
	}
}

func getJob(t *testing.T, st engram.Store, ns engram.Namespace, id string) *engram.Job {
	t.Helper()
	var j *engram.Job
	view(t, st, func(r engram.Reader) (err error) {
		j, err = r.GetJob(ctx, engram.ScopeOf(ns), id)
		return err
	})
	return j
}

// testJobKinds: a form job and an embed job round-trip with their kind,
// ids and operations through EnqueueJob, GetJob, ListJobs and ClaimJob; a
// job with no kind is a form job; a bad kind, ids that do not fit the
// kind, or an operation that is not an embed job's UPDATE is EINVALID and
// stores nothing.
func testJobKinds(t *testing.T, open Opener) {
	st := open(t)
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	newJob := func(kind engram.JobKind, eps, mems []string) *engram.Job {
		return &engram.Job{ID: engram.NewID(), Namespace: nsU1, Kind: kind, Episodes: eps, Memories: mems,
			State: engram.JobQueued, RunAfter: now, CreatedAt: now, UpdatedAt: now}
	}
	form := newJob("", []string{engram.NewID()}, nil)
	embed := newJob(engram.JobEmbed, nil, []string{engram.NewID(), engram.NewID()})
	prev := Memory(nsU1, "Lena plays the cello")
	prev.Version, prev.Abstraction = 3, "Lena plays the cello. — Tom: since when?"
	embed.Ops = []engram.MemoryOp{{Op: engram.OpUpdate, TargetID: prev.ID, Memory: *prev, Reason: "the conversation went on"}}
	withOps := func(kind engram.JobKind, op engram.Op) *engram.Job {
		j := newJob(kind, nil, []string{engram.NewID()})
		if kind == engram.JobForm {
			j = newJob(kind, []string{engram.NewID()}, nil)
		}
		j.Ops = []engram.MemoryOp{{Op: op, TargetID: prev.ID, Memory: *prev}}
		return j
	}
	queue(t, st, func(q engram.JobQueue) error {
		if err := q.EnqueueJob(ctx, form); err != nil {
			return err
		}
		return q.EnqueueJob(ctx, embed)
	})
	for _, bad := range []*engram.Job{
		newJob("rebuild", []string{engram.NewID()}, nil),
		newJob(engram.JobEmbed, nil, nil),
		newJob(engram.JobEmbed, []string{engram.NewID()}, []string{engram.NewID()}),
		newJob(engram.JobForm, []string{engram.NewID()}, []string{engram.NewID()}),
		newJob(engram.JobEmbed, nil, []string{"not an id"}),
		withOps(engram.JobForm, engram.OpUpdate),
		withOps(engram.JobEmbed, engram.OpDelete),
	} {
		err := st.Update(ctx, func(tx engram.Tx) error { return tx.EnqueueJob(ctx, bad) })
		if engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("enqueue kind %q, episodes %v, memories %v: %v, want EINVALID", bad.Kind, bad.Episodes, bad.Memories, err)
		}
	}
	if ids := jobIDs(t, st, nsU1); len(ids) != 2 {
		t.Fatalf("jobs after the bad ones = %v, want the two good ones", ids)
	}
	check := func(how string, got *engram.Job, want *engram.Job, kind engram.JobKind) {
		t.Helper()
		if got == nil || got.ID != want.ID || got.Kind != kind || !slices.Equal(got.Episodes, want.Episodes) || !slices.Equal(got.Memories, want.Memories) {
			t.Errorf("%s: %+v, want kind %s, episodes %v, memories %v", how, got, kind, want.Episodes, want.Memories)
			return
		}
		if len(got.Ops) != len(want.Ops) {
			t.Errorf("%s: %d ops, want %d", how, len(got.Ops), len(want.Ops))
			return
		}
		for i, op := range got.Ops {
			w := want.Ops[i]
			if op.Op != w.Op || op.TargetID != w.TargetID || op.Reason != w.Reason || op.Memory.ID != w.Memory.ID ||
				op.Memory.Version != w.Memory.Version || op.Memory.Abstraction != w.Memory.Abstraction || op.Memory.Value != w.Memory.Value {
				t.Errorf("%s: ops[%d] = %+v, want %+v", how, i, op, w)
			}
		}
	}
	view(t, st, func(r engram.Reader) error {
		for _, w := range []struct {
			j    *engram.Job
			kind engram.JobKind
		}{{form, engram.JobForm}, {embed, engram.JobEmbed}} {
			got, err := r.GetJob(ctx, engram.ScopeOf(nsU1), w.j.ID)
			if err != nil {
				return err
			}
			check("GetJob", got, w.j, w.kind)
		}
		js, _, err := r.ListJobs(ctx, engram.ScopeOf(nsU1), engram.JobFilter{})
		if err != nil {
			return err
		}
		for i := range js {
			if js[i].ID == embed.ID {
				check("ListJobs", &js[i], embed, engram.JobEmbed)
			}
		}
		return nil
	})
	first := claim(t, st, now)
	check("first claim", first, form, engram.JobForm)
	queue(t, st, func(q engram.JobQueue) error { return q.CompleteJob(ctx, nsU1, form.ID, "w1", now) })
	check("second claim", claim(t, st, now), embed, engram.JobEmbed)
}
