package storetest

import (
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// testJobBacklog: the backlog counts the unfinished jobs of every tenant
// by kind and state with the time the oldest was enqueued, and leaves out
// finished ones.
func testJobBacklog(t *testing.T, open Opener) {
	st := open(t)
	newJob := func(ns engram.Namespace, kind engram.JobKind, at time.Time) *engram.Job {
		j := &engram.Job{ID: engram.NewID(), Namespace: ns, Kind: kind, State: engram.JobQueued, RunAfter: at, CreatedAt: at, UpdatedAt: at}
		if kind == engram.JobEmbed {
			j.Memories = []string{engram.NewID()}
		} else {
			j.Episodes = []string{engram.NewID()}
		}
		return j
	}
	done := newJob(nsU1, engram.JobForm, At(0*time.Minute))
	jobs := []*engram.Job{done, newJob(nsU1, engram.JobForm, At(1*time.Minute)), newJob(nsOther, engram.JobForm, At(2*time.Minute)),
		newJob(nsU2, engram.JobEmbed, At(3*time.Minute)), newJob(nsOther, engram.JobEmbed, At(4*time.Minute))}
	queue(t, st, func(q engram.JobQueue) error {
		for _, j := range jobs {
			if err := q.EnqueueJob(ctx, j); err != nil {
				return err
			}
		}
		return nil
	})
	queue(t, st, func(q engram.JobQueue) error {
		j, err := q.ClaimJob(ctx, "w1", At(5*time.Minute), time.Hour)
		if err != nil || j == nil || j.ID != done.ID {
			t.Fatalf("claim = %+v, %v; want the oldest job", j, err)
		}
		return q.CompleteJob(ctx, nsU1, done.ID, "w1", At(5*time.Minute))
	})
	var got []engram.JobBacklog
	view(t, st, func(r engram.Reader) error {
		var err error
		got, err = r.JobBacklog(ctx)
		return err
	})
	want := []engram.JobBacklog{
		{Kind: engram.JobEmbed, State: engram.JobQueued, Count: 2, Oldest: At(3 * time.Minute)},
		{Kind: engram.JobForm, State: engram.JobQueued, Count: 2, Oldest: At(1 * time.Minute)},
	}
	if len(got) != len(want) {
		t.Fatalf("backlog = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind || got[i].State != want[i].State || got[i].Count != want[i].Count || !got[i].Oldest.Equal(want[i].Oldest) {
			t.Errorf("backlog[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}
