package vault

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
)

// KeySize is the size of a master key and of a data key: AES-256.
const KeySize = 32

// EnvKey is the environment variable that holds the master key.
const EnvKey = "ENGRAM_VAULT_KEY"

// ParseKey decodes a master key written as 64 hex digits or as base64
// (standard or URL alphabet, padded or not) of 32 bytes. The error says
// what was wrong without echoing the key.
func ParseKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if b, err := hex.DecodeString(s); err == nil && len(b) == KeySize {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == KeySize {
			return b, nil
		}
	}
	return nil, fmt.Errorf("vault: the master key must be %d bytes written as %d hex digits or as base64 (it is %d characters); make one with: openssl rand -base64 32", KeySize, 2*KeySize, len(s))
}

// LoadKey returns the master key from the key file path when it is not
// empty, else from the value of ENGRAM_VAULT_KEY (env), and nil, nil when
// neither is given (the vault is off). A file holds the key as text (hex or
// base64) or as its 32 raw bytes. Giving both is an error, so that which
// key is used is never a guess.
func LoadKey(env, path string) ([]byte, error) {
	switch {
	case path != "" && env != "":
		return nil, fmt.Errorf("vault: both %s and a key file are given; give one", EnvKey)
	case path == "" && env == "":
		return nil, nil
	case path == "":
		return ParseKey(env)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vault: read the master key file: %w", err)
	}
	k, err := ParseKey(string(b))
	if err != nil && len(b) == KeySize {
		return b, nil // 32 raw bytes
	}
	if err != nil {
		return nil, fmt.Errorf("%w (in the file %s)", err, path)
	}
	return k, nil
}
