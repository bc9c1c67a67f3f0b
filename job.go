package engram

import (
	"context"
	"time"
)

// A Job is a unit of background work kept in the store, of one of two
// kinds: forming memories from episodes that an asynchronous AddEpisodes
// stored (JobForm), or embedding memories that an add stored before their
// vectors were made (JobEmbed). It names its episodes or memories by id
// (their text stays in their own tables) and lives in the namespace of the
// add that made it, so it is read, like they are, only within its scope.
//
// Jobs of one namespace run one at a time in the order they were enqueued.
// A worker claims a job with a lease; one whose lease expires (its worker
// died) is claimed again by another worker.
type Job struct {
	ID        string    `json:"id"`
	Namespace Namespace `json:"namespace"`
	// Kind is what the job does; "" in a Job read from a store written
	// before kinds existed means JobForm.
	Kind     JobKind  `json:"kind"`
	Episodes []string `json:"episodes,omitempty"` // a form job's episodes
	Memories []string `json:"memories,omitempty"` // an embed job's memories
	// Ops are updates formation decided at the add and left to its embed
	// job: the memory of the turn before gains the new turn as context.
	// Each Memory is the target as read then, changed: the job applies an
	// op only if its target is still that version (Memory.Version) and
	// active. The store keeps them; the API does not show them.
	Ops       []MemoryOp `json:"-"`
	State     JobState   `json:"state"`
	Attempts  int        `json:"attempts"` // claims so far, the running one included
	LastError string     `json:"last_error,omitempty"`
	// LeaseOwner and LeaseUntil name the worker that holds a running job
	// and when its hold lapses.
	LeaseOwner string     `json:"lease_owner,omitempty"`
	LeaseUntil *time.Time `json:"lease_until,omitempty"`
	RunAfter   time.Time  `json:"run_after"` // a queued or retrying job is not claimed before
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

// JobKind is what a job does.
type JobKind string

// Job kinds. A form job forms the memories of its episodes (an
// asynchronous add); an embed job embeds the texts its memories have when
// it runs and stores their vectors (an add that answered before its
// memories were embedded, see engine.Options.EmbedInline).
const (
	JobForm  JobKind = "form"
	JobEmbed JobKind = "embed"
)

// Valid reports whether k is one of the job kinds.
func (k JobKind) Valid() bool { return k == JobForm || k == JobEmbed }

// JobState is where a job is in its life.
type JobState string

// Job states. A queued job waits for its first run; a running one is held
// by a worker (Attempts counts its run); a retrying one failed an attempt
// (LastError says why) or was put off, and runs again at RunAfter. Done
// and failed are final.
const (
	JobQueued   JobState = "queued"
	JobRunning  JobState = "running"
	JobRetrying JobState = "retrying"
	JobDone     JobState = "done"
	JobFailed   JobState = "failed"
)

// Valid reports whether s is one of the job states.
func (s JobState) Valid() bool {
	switch s {
	case JobQueued, JobRunning, JobRetrying, JobDone, JobFailed:
		return true
	}
	return false
}

// JobFilter narrows a list of jobs. The zero value lists every job of the
// scope, newest first.
type JobFilter struct {
	States []JobState `json:"states,omitempty"`
	Limit  int        `json:"limit,omitempty"` // default DefaultLimit, at most MaxLimit
	Cursor string     `json:"cursor,omitempty"`
}

// Validate returns an EINVALID error naming the first bad field.
func (f JobFilter) Validate() error {
	for _, s := range f.States {
		if !s.Valid() {
			return Errorf(EINVALID, "state %q is not one of queued, running, retrying, done, failed", s)
		}
	}
	_, err := ClampLimit(f.Limit)
	return err
}

// JobPage is one page of a list of jobs.
type JobPage struct {
	Jobs []Job  `json:"jobs"`
	Next string `json:"next,omitempty"`
	// Breaker is the state of the circuit breaker around the former's
	// model, when the engine's former has one (it is the same for every
	// tenant: the model is shared).
	Breaker *BreakerStatus `json:"breaker,omitempty"`
}

// BreakerStatus is the state of a circuit breaker around a model: closed
// (calls go out), open (calls are refused until RetryAt, and the jobs that
// need the model wait) or half-open (one probe call is out).
type BreakerStatus struct {
	State    string     `json:"state"`
	Failures int        `json:"failures"` // consecutive failed calls
	RetryAt  *time.Time `json:"retry_at,omitempty"`
}

// BreakerReporter is the optional capability of a Former whose model
// calls go through a circuit breaker (llmformer's). A former that calls no
// model (the rules former) lacks it, and a page of jobs then reports no
// breaker.
type BreakerReporter interface {
	BreakerStatus() BreakerStatus
}

// JobReader is the capability of a Reader whose store keeps a job queue.
type JobReader interface {
	// GetJob returns the job with id in s, or ENOTFOUND (also for a job
	// outside s); EINVALID for a bad scope.
	GetJob(ctx context.Context, s Scope, id string) (*Job, error)
	// ListJobs returns the jobs of s newest first (by id descending) and
	// the cursor of the next page ("" on the last page); EINVALID for a
	// bad scope or filter.
	ListJobs(ctx context.Context, s Scope, f JobFilter) ([]Job, string, error)
}

// JobQueue is the capability of a Tx whose store keeps a job queue. Claims
// see every tenant: they serve the workers of the engine, never a client.
type JobQueue interface {
	JobReader
	// EnqueueJob stores a new queued job; ECONFLICT if its id exists,
	// EINVALID if it has no id, no episodes or a bad namespace.
	EnqueueJob(ctx context.Context, j *Job) error
	// ClaimJob takes the oldest job that may run at now: queued or
	// retrying with RunAfter not after now, or running with a lease that
	// lapsed, and no older job of its namespace still queued, retrying or
	// running; jobs of the tenants in skip (Namespace.Tenant) are left
	// for later. It makes it running under owner until now+lease, counts
	// the attempt, and returns it; nil and no error when no job may run.
	// Concurrent claims never return the same job while its lease holds.
	ClaimJob(ctx context.Context, owner string, now time.Time, lease time.Duration, skip ...string) (*Job, error)
	// CompleteJob marks the tenant's job id done; ECONFLICT if it is not
	// running under owner's lease (another worker took it over).
	CompleteJob(ctx context.Context, tenant Namespace, id, owner string, now time.Time) error
	// FailJob records reason as the job's last error and makes it
	// retrying at retryAt, or, with retryAt nil, marks it failed for good;
	// ECONFLICT if it is not running under owner's lease.
	FailJob(ctx context.Context, tenant Namespace, id, owner, reason string, retryAt *time.Time, now time.Time) error
	// DeferJob puts the job off without counting its attempt: retrying at
	// runAt, reason as its last error, Attempts one fewer (for a run that
	// never reached the work, such as a model held off by a circuit
	// breaker); ECONFLICT if it is not running under owner's lease.
	DeferJob(ctx context.Context, tenant Namespace, id, owner, reason string, runAt, now time.Time) error
}
