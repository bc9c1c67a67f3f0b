package storeutil

import (
	"errors"
	"math"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// MaxMetaKey bounds the key of a store-wide value.
const MaxMetaKey = 256

// MaxEmbedderName bounds the embedder name stored with every vector.
const MaxEmbedderName = 256

// CheckMetaKey returns EINVALID unless key is 1 to MaxMetaKey bytes of
// UTF-8.
func CheckMetaKey(key string) error {
	if key == "" || len(key) > MaxMetaKey || !utf8.ValidString(key) {
		return engram.Errorf(engram.EINVALID, "meta key must be 1 to %d bytes of UTF-8", MaxMetaKey)
	}
	return nil
}

// CheckEmbedder returns EINVALID unless name is 1 to MaxEmbedderName bytes
// of UTF-8.
func CheckEmbedder(name string) error {
	if name == "" || len(name) > MaxEmbedderName || !utf8.ValidString(name) {
		return engram.Errorf(engram.EINVALID, "embedder name must be 1 to %d bytes of UTF-8", MaxEmbedderName)
	}
	return nil
}

// CheckMemory returns m.Validate's error, or EINVALID if m has no id: a
// store is handed memories whose id the engine has already assigned.
func CheckMemory(m *engram.Memory) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if m.ID == "" {
		return engram.Errorf(engram.EINVALID, "memory: id is required")
	}
	return nil
}

// CheckFieldVectors checks the vectors PutVectors is given for memoryID
// before anything is written: EINVALID for a field other than abstraction
// or value or given twice, an empty vector, vectors of different lengths,
// or a value that is NaN or infinite. short shortens an echoed field name
// the way the calling backend shortens ids in its messages.
func CheckFieldVectors(memoryID string, vecs []engram.FieldVector, short func(string) string) error {
	for i, fv := range vecs {
		if fv.Field != engram.FieldAbstraction && fv.Field != engram.FieldValue {
			return engram.Errorf(engram.EINVALID, "vector field %q is not %s or %s", short(fv.Field), engram.FieldAbstraction, engram.FieldValue)
		}
		for _, prev := range vecs[:i] {
			if prev.Field == fv.Field {
				return engram.Errorf(engram.EINVALID, "vector field %s is given twice", fv.Field)
			}
		}
		if len(fv.Vec) == 0 {
			return engram.Errorf(engram.EINVALID, "the %s vector of memory %s is empty", fv.Field, memoryID)
		}
		if len(fv.Vec) != len(vecs[0].Vec) {
			return engram.Errorf(engram.EINVALID, "the vectors of memory %s have different lengths (%d and %d)", memoryID, len(vecs[0].Vec), len(fv.Vec))
		}
		for j, x := range fv.Vec {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return engram.Errorf(engram.EINVALID, "the %s vector of memory %s has a non-finite value at %d", fv.Field, memoryID, j)
			}
		}
	}
	return nil
}

// InvalidID returns the EINVALID error for an id that is not a valid id,
// echoing it through short so a hostile id cannot make the message
// arbitrarily long.
func InvalidID(what, id string, short func(string) string) error {
	return engram.Errorf(engram.EINVALID, "%s id %q is not a valid id", what, short(id))
}

// CheckEpisode returns e.Validate's error, or EINVALID if e has no id.
func CheckEpisode(e *engram.Episode) error {
	if err := e.Validate(); err != nil {
		return err
	}
	if e.ID == "" {
		return engram.Errorf(engram.EINVALID, "episode: id is required")
	}
	return nil
}

// CheckVersion returns EINVALID for a version with a bad namespace or
// memory id (echoed through short), a number below 1 or an empty op.
func CheckVersion(v *engram.Version, short func(string) string) error {
	if err := v.Namespace.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(v.MemoryID) {
		return InvalidID("version: memory", v.MemoryID, short)
	}
	if v.Version < 1 {
		return engram.Errorf(engram.EINVALID, "version: number %d is not positive", v.Version)
	}
	if v.Op == "" {
		return engram.Errorf(engram.EINVALID, "version: op is required")
	}
	return nil
}

// CheckAudit returns EINVALID for an audit entry with a bad namespace or id
// (echoed through short) or an empty op.
func CheckAudit(a *engram.AuditEntry, short func(string) string) error {
	if err := a.Namespace.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(a.ID) {
		return InvalidID("audit", a.ID, short)
	}
	if a.Op == "" {
		return engram.Errorf(engram.EINVALID, "audit: op is required")
	}
	return nil
}

// CheckPutVectors checks everything PutVectors is given before anything is
// written, in the order both backends report it: the namespace, the memory
// id (echoed through short), the embedder name (with checkEmbedder, which
// may add the backend's own limits) and then the vectors (CheckFieldVectors).
// Every failure is EINVALID.
func CheckPutVectors(n engram.Namespace, memoryID, embedder string, vecs []engram.FieldVector,
	short func(string) string, checkEmbedder func(string) error) error {
	if err := n.Validate(); err != nil {
		return err
	}
	if !engram.ValidID(memoryID) {
		return InvalidID("memory", memoryID, short)
	}
	if err := checkEmbedder(embedder); err != nil {
		return err
	}
	return CheckFieldVectors(memoryID, vecs, short)
}

// CheckJob returns an EINVALID error when a job to enqueue has no valid id,
// a bad namespace, a kind that is not one of the job kinds, not the ids
// its kind needs (episodes for a form job, memories for an embed job, not
// both), an id there that is not an id, an operation that is not an
// UPDATE of a valid id on an embed job, or a state that is not queued. It
// makes an empty Kind JobForm.
func CheckJob(j *engram.Job, short func(string) string) error {
	if !engram.ValidID(j.ID) {
		return InvalidID("job", j.ID, short)
	}
	if err := j.Namespace.Validate(); err != nil {
		return err
	}
	if j.Kind == "" {
		j.Kind = engram.JobForm
	}
	ids, what := j.Episodes, "episode"
	switch {
	case !j.Kind.Valid():
		return engram.Errorf(engram.EINVALID, "job %s: kind %q is not one of form, embed", j.ID, j.Kind)
	case j.Kind == engram.JobForm && (len(j.Episodes) == 0 || len(j.Memories) > 0):
		return engram.Errorf(engram.EINVALID, "job %s: a form job names episodes and no memories", j.ID)
	case j.Kind == engram.JobEmbed && (len(j.Memories) == 0 || len(j.Episodes) > 0):
		return engram.Errorf(engram.EINVALID, "job %s: an embed job names memories and no episodes", j.ID)
	case j.Kind == engram.JobEmbed:
		ids, what = j.Memories, "memory"
	}
	for _, id := range ids {
		if !engram.ValidID(id) {
			return InvalidID(what, id, short)
		}
	}
	for i, op := range j.Ops {
		switch {
		case j.Kind != engram.JobEmbed:
			return engram.Errorf(engram.EINVALID, "job %s: only an embed job carries operations", j.ID)
		case op.Op != engram.OpUpdate:
			return engram.Errorf(engram.EINVALID, "job %s: ops[%d] is %q; a job carries updates only", j.ID, i, op.Op)
		case !engram.ValidID(op.TargetID):
			return InvalidID("ops target", op.TargetID, short)
		}
	}
	if j.State != engram.JobQueued {
		return engram.Errorf(engram.EINVALID, "a new job must be queued, not %q", j.State)
	}
	return nil
}

// CheckRelations validates every relation of rs and returns EINVALID for
// an id given twice.
func CheckRelations(rs []*engram.Relation) error {
	seen := make(map[string]bool, len(rs))
	for _, r := range rs {
		if err := r.Validate(); err != nil {
			return err
		}
		if seen[r.ID] {
			return engram.Errorf(engram.EINVALID, "relations: relation %s is given twice", r.ID)
		}
		seen[r.ID] = true
	}
	return nil
}

// CheckKey returns EINVALID for an API key without an id, a role or a
// hash, and the namespace's own error for a bad owner.
func CheckKey(k *engram.APIKey) error {
	if k.ID == "" || k.Role == "" || len(k.Hash) == 0 {
		return engram.Errorf(engram.EINVALID, "an API key needs an id, a role and a hash")
	}
	return (engram.Namespace{Org: k.Org, Project: k.Project, User: k.User}).Validate()
}

// IsCoded reports whether err is nil or already an *engram.Error, which a
// store's error mapping passes through unchanged.
func IsCoded(err error) bool {
	var ee *engram.Error
	return err == nil || errors.As(err, &ee)
}

// ValidIDs returns the well-formed ids of ids, each once, in their first
// order: a batch read skips the others.
func ValidIDs(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	want := make([]string, 0, len(ids))
	for _, id := range ids {
		if engram.ValidID(id) && !seen[id] {
			seen[id] = true
			want = append(want, id)
		}
	}
	return want
}
