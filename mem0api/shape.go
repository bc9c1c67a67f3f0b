package mem0api

import (
	"fmt"
	"time"

	"github.com/engramhq/engram"
)

// Mem0's events in an add's results and a memory's history.
const (
	eventAdd    = "ADD"
	eventUpdate = "UPDATE"
	eventDelete = "DELETE"
)

// memoryJSON is a memory as Mem0 returns it.
func memoryJSON(m *engram.Memory) map[string]any {
	out := map[string]any{
		"id":              m.ID,
		"memory":          m.Value,
		"user_id":         orNil(m.Namespace.User),
		"agent_id":        orNil(m.Namespace.Agent),
		"run_id":          orNil(m.Namespace.Session),
		"app_id":          nil,
		"metadata":        metadataOrNil(m.Metadata),
		"categories":      []string{},
		"created_at":      iso(m.CreatedAt),
		"updated_at":      iso(m.UpdatedAt),
		"expiration_date": nil,
		"status":          m.Status,
	}
	if m.ExpiresAt != nil {
		out["expiration_date"] = m.ExpiresAt.UTC().Format(time.DateOnly)
	}
	return out
}

// eventOf names, in Mem0's terms, what an add's formation did to m: a
// memory at version 1 was added; one deleted or superseded (replaced by a
// newer memory, which is listed as added) left the current set; any other
// was updated (engram's UPDATE and MERGE, and a turn's memory extended by
// the next turn).
func eventOf(m *engram.Memory) string {
	switch {
	case m.Status == engram.StatusDeleted || m.Status == engram.StatusSuperseded:
		return eventDelete
	case m.Version <= 1:
		return eventAdd
	}
	return eventUpdate
}

// addResult is one entry of an add's results.
func addResult(m *engram.Memory, event string) map[string]any {
	out := memoryJSON(m)
	out["event"] = event
	out["data"] = map[string]any{"memory": m.Value}
	return out
}

// historyJSON is one version as an entry of Mem0's history: engram's ADD
// and CONFLICT are ADD, DELETE is DELETE, every other change (UPDATE,
// MERGE, SUPERSEDE, RESTORE) is UPDATE; engram_op keeps the original.
func historyJSON(v engram.Version) map[string]any {
	event := eventUpdate
	switch v.Op {
	case engram.OpAdd, engram.OpConflict:
		event = eventAdd
	case engram.OpDelete:
		event = eventDelete
	}
	var oldText, newText any
	if v.Old != nil {
		oldText = v.Old.Value
	}
	if v.New != nil && event != eventDelete {
		newText = v.New.Value
	}
	return map[string]any{
		"id":         fmt.Sprintf("%s-%d", v.MemoryID, v.Version),
		"memory_id":  v.MemoryID,
		"version":    v.Version,
		"event":      event,
		"engram_op":  v.Op,
		"old_memory": oldText,
		"new_memory": newText,
		"input":      []any{},
		"user_id":    orNil(v.Namespace.User),
		"agent_id":   orNil(v.Namespace.Agent),
		"run_id":     orNil(v.Namespace.Session),
		"categories": []string{},
		"actor":      v.Actor,
		"reason":     v.Reason,
		"created_at": iso(v.At),
		"updated_at": iso(v.At),
	}
}

func iso(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func metadataOrNil(m map[string]any) any {
	if len(m) == 0 {
		return nil
	}
	return m
}
