package engram_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func TestAPIKey(t *testing.T) {
	spec := engram.KeySpec{Namespace: engram.Namespace{Org: "acme", Project: "app", User: "ann"}, Role: engram.RoleWrite}
	k, secret, err := engram.NewAPIKey(spec, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := engram.KeyID(secret); !ok || id != k.ID {
		t.Errorf("KeyID(%q) = %q, %v; want %q", secret, id, ok, k.ID)
	}
	if strings.Contains(string(k.Hash), secret) || !k.Matches(secret) || k.Matches(secret+"0") || k.Matches("") {
		t.Error("Matches accepts the wrong secret or rejects the right one")
	}
	_, other, _ := engram.NewAPIKey(spec, time.Unix(0, 0))
	if other == secret {
		t.Error("two keys share a secret")
	}
	for role, want := range map[string]bool{engram.RoleRead: true, engram.RoleWrite: true, engram.RoleAdmin: false, "": false, "root": false} {
		if got := k.Allows(role); got != want {
			t.Errorf("a write key allows %q: %v, want %v", role, got, want)
		}
	}
	for _, s := range []string{"", "ek_", "ek_abc_def", "Bearer " + secret, secret[1:], "ek_" + k.ID + "_" + strings.Repeat("0", 63)} {
		if _, ok := engram.KeyID(s); ok {
			t.Errorf("KeyID(%q) accepted a malformed secret", s)
		}
	}
}

func TestNewAPIKeyRefusals(t *testing.T) {
	for name, spec := range map[string]engram.KeySpec{
		"unknown role":  {Namespace: engram.Namespace{Org: "o", Project: "p"}, Role: "root"},
		"no project":    {Namespace: engram.Namespace{Org: "o"}, Role: engram.RoleRead},
		"agent":         {Namespace: engram.Namespace{Org: "o", Project: "p", Agent: "a"}, Role: engram.RoleRead},
		"slash in name": {Namespace: engram.Namespace{Org: "o", Project: "p"}, Role: engram.RoleRead, Name: "a/b"},
	} {
		if _, _, err := engram.NewAPIKey(spec, time.Now()); engram.ErrorCode(err) != engram.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
}
