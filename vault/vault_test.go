package vault_test

import (
	"crypto/cipher"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/vault"
)

func TestParseKey(t *testing.T) {
	raw := []byte("0123456789abcdef0123456789abcdef")
	for name, s := range map[string]string{
		"hex":        hex.EncodeToString(raw),
		"base64":     base64.StdEncoding.EncodeToString(raw),
		"raw base64": base64.RawStdEncoding.EncodeToString(raw),
		"url base64": " " + base64.URLEncoding.EncodeToString(raw) + "\n",
	} {
		k, err := vault.ParseKey(s)
		if err != nil || string(k) != string(raw) {
			t.Errorf("%s: ParseKey = %q, %v", name, k, err)
		}
	}
	for name, s := range map[string]string{
		"empty":    "",
		"short":    hex.EncodeToString(raw[:16]),
		"long":     base64.StdEncoding.EncodeToString(append(raw, 1)),
		"not text": "geheimes Passwort",
	} {
		if _, err := vault.ParseKey(s); err == nil {
			t.Errorf("%s: ParseKey(%q) succeeded", name, s)
		} else if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("%s: the error %q echoes the key", name, err)
		}
	}
}

func TestLoadKey(t *testing.T) {
	raw := []byte("0123456789abcdef0123456789abcdef")
	dir := t.TempDir()
	rawFile, textFile := filepath.Join(dir, "raw"), filepath.Join(dir, "text")
	if err := os.WriteFile(rawFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(textFile, []byte(hex.EncodeToString(raw)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ env, path string }{{hex.EncodeToString(raw), ""}, {"", rawFile}, {"", textFile}} {
		if k, err := vault.LoadKey(c.env, c.path); err != nil || string(k) != string(raw) {
			t.Errorf("LoadKey(%q, %q) = %q, %v", c.env, c.path, k, err)
		}
	}
	if k, err := vault.LoadKey("", ""); k != nil || err != nil {
		t.Errorf("LoadKey with neither = %q, %v; want nil, nil", k, err)
	}
	if _, err := vault.LoadKey(hex.EncodeToString(raw), rawFile); err == nil {
		t.Errorf("LoadKey with both succeeded")
	}
	if _, err := vault.LoadKey("", filepath.Join(dir, "missing")); err == nil {
		t.Errorf("LoadKey of a missing file succeeded")
	}
}

// TestSealOpen: what is sealed opens only with its data key, on its own
// memory (id and namespace); one flipped bit anywhere fails; a sealed
// memory keeps its plaintext nowhere.
func TestSealOpen(t *testing.T) {
	dkA, dkB := vault.NewTestAEAD(t, "a"), vault.NewTestAEAD(t, "b")
	m := engram.Memory{
		ID: engram.NewID(), Namespace: engram.Namespace{Org: "acme", Project: "app", User: "u1"},
		Kind: engram.KindVault, Value: "Kennwort: Zebra-七-42", Abstraction: "das WLAN-Kennwort",
		Cues: []string{"WLAN"}, Metadata: map[string]any{"room": "Küche"}, Language: "de",
	}
	s, err := vault.Seal(dkA, m)
	if err != nil {
		t.Fatal(err)
	}
	if !vault.IsSealed(&s) || s.Abstraction != "" || s.Cues != nil || s.Metadata != nil || s.Language != "" {
		t.Fatalf("sealed memory keeps plaintext fields: %+v", s)
	}
	for _, p := range []string{"Zebra", "WLAN", "Küche"} {
		if strings.Contains(s.Value, p) {
			t.Errorf("sealed value holds %q", p)
		}
	}
	if s2, _ := vault.Seal(dkA, m); s2.Value == s.Value {
		t.Errorf("two seals of one memory are equal: the nonce is not random")
	}
	o, err := vault.Open(dkA, s)
	if err != nil || o.Value != m.Value || o.Abstraction != m.Abstraction || o.Cues[0] != "WLAN" || o.Metadata["room"] != "Küche" || o.Language != "de" {
		t.Fatalf("Open = %+v, %v", o, err)
	}
	moved, otherUser, otherTenant := s, s, s
	moved.ID = engram.NewID()
	otherUser.Namespace.User = "u2"
	otherTenant.Namespace.Org = "globex"
	for name, c := range map[string]struct {
		dk cipher.AEAD
		m  engram.Memory
	}{
		"another tenant's key": {dkB, s},
		"another id":           {dkA, moved},
		"another user":         {dkA, otherUser},
		"another tenant":       {dkA, otherTenant},
	} {
		if _, err := vault.Open(c.dk, c.m); engram.ErrorCode(err) != engram.EINTERNAL {
			t.Errorf("%s: Open = %v, want an EINTERNAL error", name, err)
		}
	}
	if _, err := vault.Open(nil, s); err == nil {
		t.Errorf("Open without a data key succeeded")
	}
	raw, _ := base64.RawStdEncoding.DecodeString(strings.TrimPrefix(s.Value, "vault:v1:"))
	for i := range raw {
		flipped := append([]byte(nil), raw...)
		flipped[i] ^= 1
		c := s
		c.Value = "vault:v1:" + base64.RawStdEncoding.EncodeToString(flipped)
		if _, err := vault.Open(dkA, c); err == nil {
			t.Fatalf("a bit flipped in byte %d opened", i)
		}
	}
	plain := engram.Memory{ID: m.ID, Kind: engram.KindSemantic, Value: "nicht geheim"}
	if s, _ := vault.Seal(dkA, plain); s.Value != plain.Value {
		t.Errorf("Seal changed a memory of another kind")
	}
}
