package storeutil

import (
	"time"

	"github.com/engramhq/engram"
)

// Settle is how a store ends a worker's hold of a running job: its new
// state, its last error when Reason is set, its run_after when RunAt is,
// and whether the attempt is given back.
type Settle struct {
	State    engram.JobState
	Reason   *string
	RunAt    *time.Time
	GiveBack bool
}

// SettleDone is the end of a job's successful run.
func SettleDone() Settle { return Settle{State: engram.JobDone} }

// SettleFailed is the end of a failed attempt: retrying at retryAt with
// reason as the last error, or failed for good when retryAt is nil.
func SettleFailed(reason string, retryAt *time.Time) Settle {
	st := Settle{State: engram.JobFailed, Reason: &reason, RunAt: retryAt}
	if retryAt != nil {
		st.State = engram.JobRetrying
	}
	return st
}

// SettleDeferred puts a job off to runAt with reason as its last error,
// its attempt given back.
func SettleDeferred(reason string, runAt time.Time) Settle {
	return Settle{State: engram.JobRetrying, Reason: &reason, RunAt: &runAt, GiveBack: true}
}

// GivenBack is what settling takes off the job's attempts: 1 or 0.
func (st Settle) GivenBack() int {
	if st.GiveBack {
		return 1
	}
	return 0
}
