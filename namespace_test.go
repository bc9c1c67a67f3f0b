package engram_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/engramhq/engram"
)

func TestNamespaceValidate(t *testing.T) {
	for _, tc := range []struct {
		ns  engram.Namespace
		msg string // "" means valid
	}{
		{engram.Namespace{Org: "o", Project: "p"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "u", Agent: "a", Session: "s"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "张伟"}, ""},
		{engram.Namespace{Project: "p"}, "org is required"},
		{engram.Namespace{Org: "o"}, "project is required"},
		{engram.Namespace{Org: "o", Project: "p", User: "a/b"}, "may not contain"},
		{engram.Namespace{Org: "o", Project: "p", User: " u"}, "may not contain"},
		{engram.Namespace{Org: "o", Project: "p", Session: "a\tb"}, "control characters"},
		{engram.Namespace{Org: "o", Project: "p", Agent: strings.Repeat("a", engram.MaxNameLen+1)}, "longer than"},
		{engram.Namespace{Org: "o", Project: "p", User: "\xff"}, "namespace.user is not valid UTF-8"},
		{engram.Namespace{Project: "p"}, "namespace.org is required"},
		{engram.Namespace{Org: "o", Project: "p", User: "admin\u202Egnp.exe"}, "namespace.user may not contain the bidirectional control character U+202E"},
		{engram.Namespace{Org: "o", Project: "p", Agent: "a\u2066b"}, "namespace.agent may not contain the bidirectional"},
		{engram.Namespace{Org: "o", Project: "p", Session: "a\u202Ab"}, "namespace.session may not contain the bidirectional"},
		{engram.Namespace{Org: "o", Project: "p", User: "a\u0085b"}, "namespace.user may not contain control characters"},
		{engram.Namespace{Org: "o", Project: "p", User: "a\x7fb"}, "control characters"},
		{engram.Namespace{Org: "o", Project: "p", User: "Jose\u0301"}, "namespace.user \"Jose\u0301\" is not in Unicode normalization form NFC"},
		{engram.Namespace{Org: "o", Project: "p", User: "Jos\u00e9"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "ali\u200bce"}, "namespace.user may not contain the invisible character U+200B"},
		{engram.Namespace{Org: "o", Project: "p", User: "\ufeffalice"}, "invisible character U+FEFF"},
		{engram.Namespace{Org: "o", Project: "p", User: "al\u00adice"}, "invisible character U+00AD"},
		{engram.Namespace{Org: "o", Project: "p", User: "ali\u2060ce"}, "invisible character U+2060"},
		{engram.Namespace{Org: "o", Project: "p", User: "alice\U000E0041"}, "invisible character U+E0041"},
		{engram.Namespace{Org: "o", Project: "p", User: "alice\ufe0f"}, "invisible character U+FE0F"},
		{engram.Namespace{Org: "o", Project: "p", User: "a\u00a0b"}, "invisible character U+00A0"},
		{engram.Namespace{Org: "o", Project: "p", User: "a\u3000b"}, "invisible character U+3000"},
		{engram.Namespace{Org: "o", Project: "p", User: "\u3164"}, "invisible character U+3164"},
		{engram.Namespace{Org: "o", Project: "p", User: "\uff41\uff4c\uff49\uff43\uff45"}, `write it "alice"`},
		{engram.Namespace{Org: "o", Project: "p", User: "\ufb01sh"}, `write it "fish"`},
		{engram.Namespace{Org: "o", Project: "p", User: "\u0430lice"}, "mixes letters of the scripts Latin and Cyrillic"},
		{engram.Namespace{Org: "\u03bfpenai", Project: "p"}, "namespace.org \"\u03bfpenai\" mixes letters of the scripts Latin and Greek"},
		{engram.Namespace{Org: "o", Project: "p", User: "\u0430l\u0456\u0441\u0435"}, "mixes"},
		{engram.Namespace{Org: "o", Project: "p", User: "\u0430\u0456\u0441\u0435"}, "displays as a Latin name"},
		{engram.Namespace{Org: "o", Project: "p", User: "\u0410\u043b\u0438\u0441\u0430"}, ""},       // Алиса
		{engram.Namespace{Org: "o", Project: "p", User: "\u0391\u03bb\u03ad\u03be\u03b7\u03c2"}, ""}, // Αλέξης
		{engram.Namespace{Org: "o", Project: "p", User: "田中さん"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "tanaka-タナカ-田中"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "김민준 Kim"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "Jürgen Müller-Lüdenscheidt"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "François d'Aubigné"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "user_42.test@example.com"}, ""},
		{engram.Namespace{Org: "o", Project: "p", User: "Kim 김민준 Алиса"}, "mixes"},
	} {
		err := tc.ns.Validate()
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%+v: unexpected error %v", tc.ns, err)
			}
			continue
		}
		if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), tc.msg) {
			t.Errorf("%+v: err = %v, want invalid with %q", tc.ns, err, tc.msg)
		}
	}
}

func TestScopeContains(t *testing.T) {
	alice := engram.Namespace{Org: "o", Project: "p", User: "alice", Agent: "bot", Session: "s1"}
	shared := engram.Namespace{Org: "o", Project: "p"}
	agentOnly := engram.Namespace{Org: "o", Project: "p", Agent: "bot"}
	for _, tc := range []struct {
		name  string
		scope engram.Scope
		ns    engram.Namespace
		want  bool
	}{
		{"user sees own session", engram.Scope{Org: "o", Project: "p", User: "alice"}, alice, true},
		{"session narrows", engram.Scope{Org: "o", Project: "p", User: "alice", Session: "s2"}, alice, false},
		{"agent narrows", engram.Scope{Org: "o", Project: "p", User: "alice", Agent: "other"}, alice, false},
		{"other user", engram.Scope{Org: "o", Project: "p", User: "bob"}, alice, false},
		{"empty user is not a wildcard", engram.Scope{Org: "o", Project: "p"}, alice, false},
		{"other org", engram.Scope{Org: "x", Project: "p", User: "alice"}, alice, false},
		{"other project", engram.Scope{Org: "o", Project: "x", User: "alice"}, alice, false},
		{"shared hidden by default", engram.Scope{Org: "o", Project: "p", User: "bob"}, shared, false},
		{"shared with include_shared", engram.Scope{Org: "o", Project: "p", User: "bob", IncludeShared: true}, shared, true},
		{"agent memory not shared", engram.Scope{Org: "o", Project: "p", User: "bob", IncludeShared: true}, agentOnly, false},
		{"agent scope sees agent memory", engram.Scope{Org: "o", Project: "p", Agent: "bot"}, agentOnly, true},
		{"include_shared does not cross orgs", engram.Scope{Org: "x", Project: "p", User: "bob", IncludeShared: true}, shared, false},
		{"exact empty agent leaves out an agent's", engram.Scope{Org: "o", Project: "p", User: "alice", ExactAgent: true}, alice, false},
		{"exact empty agent admits no agent's", engram.Scope{Org: "o", Project: "p", User: "alice", ExactAgent: true}, engram.Namespace{Org: "o", Project: "p", User: "alice", Session: "s1"}, true},
		{"exact agent as named", engram.Scope{Org: "o", Project: "p", User: "alice", Agent: "bot", ExactAgent: true}, alice, true},
	} {
		if got := tc.scope.Contains(tc.ns); got != tc.want {
			t.Errorf("%s: Contains = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestErrorHelpers(t *testing.T) {
	err := engram.Errorf(engram.ENOTFOUND, "memory %s not found", "X")
	if engram.ErrorCode(err) != engram.ENOTFOUND || engram.ErrorMessage(err) != "memory X not found" {
		t.Errorf("code/message = %q/%q", engram.ErrorCode(err), engram.ErrorMessage(err))
	}
	wrapped := fmt.Errorf("context: %w", err)
	if !engram.IsNotFound(wrapped) {
		t.Errorf("wrapped error lost its code")
	}
	if engram.ErrorCode(errPlain{}) != engram.EINTERNAL || engram.ErrorMessage(errPlain{}) != "internal error" {
		t.Errorf("plain errors must map to internal with a generic message")
	}
	if engram.ErrorCode(nil) != "" {
		t.Errorf("nil error has a code")
	}
}

type errPlain struct{}

func (errPlain) Error() string { return "secret SQL detail" }

func TestNamespaceNormalize(t *testing.T) {
	decomposed := engram.Namespace{Org: "Cafe\u0301", Project: "p", User: "Jose\u0301", Agent: "a", Session: "s"}
	want := engram.Namespace{Org: "Caf\u00e9", Project: "p", User: "Jos\u00e9", Agent: "a", Session: "s"}
	if got := decomposed.Normalize(); got != want {
		t.Errorf("Normalize = %+v, want %+v", got, want)
	}
	if err := decomposed.Normalize().Validate(); err != nil {
		t.Errorf("a normalized namespace is invalid: %v", err)
	}
	sc := engram.Scope{Org: "o", Project: "p", User: "Jose\u0301", IncludeShared: true}
	if got, want := sc.Normalize(), (engram.Scope{Org: "o", Project: "p", User: "Jos\u00e9", IncludeShared: true}); got != want {
		t.Errorf("Scope.Normalize = %+v, want %+v", got, want)
	}
}
