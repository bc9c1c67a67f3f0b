package engram_test

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func TestFormedAccessors(t *testing.T) {
	day := time.Date(2024, 6, 1, 15, 0, 0, 0, time.UTC)
	m := engram.Memory{
		Namespace: engram.Namespace{Org: "o", Project: "p", User: "u"},
		ValidFrom: &day,
		Metadata: map[string]any{
			engram.MetaRole: "user", engram.MetaSpeaker: "Alice",
			engram.MetaEventFrom: "2024-05-01", engram.MetaEventTo: "2024-06-01",
			engram.MetaPrev: "m1", engram.MetaNext: "m3", engram.MetaConversation: "c7",
		},
	}
	if m.Role() != "user" || m.Speaker() != "Alice" {
		t.Errorf("role, speaker = %q, %q", m.Role(), m.Speaker())
	}
	if got := m.Conversation(); got != "c7" {
		t.Errorf("conversation = %q, want c7", got)
	}
	from, to, ok := m.EventPeriod()
	if !ok || from.Format(time.DateOnly) != "2024-05-01" || to.Format(time.DateOnly) != "2024-06-01" || !m.Dated() {
		t.Errorf("event period = %v %v %v", from, to, ok)
	}
	if got := m.Neighbours(); !slices.Equal(got, []string{"m1", "m3"}) {
		t.Errorf("neighbours = %v", got)
	}

	// The client's session wins over the former's conversation; without
	// either, the day it became valid.
	m.Namespace.Session = "s1"
	if got := m.Conversation(); got != "session//s1" {
		t.Errorf("conversation with a session = %q", got)
	}
	bare := engram.Memory{ValidFrom: &day, Metadata: map[string]any{engram.MetaEventFrom: "2024-05-01", engram.MetaEventTo: "garbage", engram.MetaPrev: 3}}
	if got := bare.Conversation(); got != "2024-06-01" {
		t.Errorf("conversation by day = %q", got)
	}
	if _, _, ok := bare.EventPeriod(); ok {
		t.Error("a malformed event period was accepted")
	}
	if got := bare.Neighbours(); got != nil {
		t.Errorf("a non-string neighbour was read: %v", got)
	}
}
