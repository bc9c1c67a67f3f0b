package engram_test

import (
	"context"
	"testing"

	"github.com/engramhq/engram"
)

// profileStore is a Reader that holds memories of several namespaces
// and lists those a scope holds; it answers nothing else.
type profileStore struct {
	engram.Reader
	ms     []engram.Memory
	scopes []engram.Scope
}

func (p *profileStore) ListMemories(_ context.Context, s engram.Scope, f engram.MemoryFilter) ([]engram.Memory, string, error) {
	p.scopes = append(p.scopes, s)
	var out []engram.Memory
	for _, m := range p.ms {
		if s.Contains(m.Namespace) && (f.Metadata[engram.MetaProfile] == nil || m.Metadata[engram.MetaProfile] == f.Metadata[engram.MetaProfile]) {
			out = append(out, m)
		}
	}
	return out, "", nil
}

// TestScopedReaderCurrentProfile checks that a session's reader finds its
// user's profile, which lies outside the session's scope, and no other
// user's.
func TestScopedReaderCurrentProfile(t *testing.T) {
	user := engram.Namespace{Org: "o", Project: "p", User: "lena"}
	session := user
	session.Agent, session.Session = "a", "s1"
	other := engram.Namespace{Org: "o", Project: "p", User: "jonas"}
	mine := engram.ProfileMemory(user, []string{"Wohnt in Berlin"}, []string{"Müde"})
	mine.ID = "mine"
	theirs := engram.ProfileMemory(other, []string{"Vive en Madrid"}, nil)
	theirs.ID = "theirs"
	st := &profileStore{ms: []engram.Memory{theirs, mine}}

	got, err := engram.ScopedReader(st, engram.ScopeOf(session)).CurrentProfile(context.Background())
	if err != nil || got == nil || got.ID != "mine" {
		t.Fatalf("CurrentProfile = %+v, %v; want the memory mine", got, err)
	}
	got, err = engram.ScopedReader(st, engram.ScopeOf(engram.Namespace{Org: "o", Project: "p", User: "mia", Session: "s"})).CurrentProfile(context.Background())
	if err != nil || got != nil {
		t.Fatalf("CurrentProfile of a user without a profile = %+v, %v; want nil", got, err)
	}
	for _, s := range st.scopes {
		if s.Namespace().User == "" || s.Namespace().Session != "" {
			t.Errorf("read scope %+v, want a user's scope without a session", s)
		}
	}
}
