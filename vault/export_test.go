package vault

import (
	"crypto/cipher"
	"strings"
	"testing"
)

// NewTestAEAD returns a data key made of one repeated letter.
func NewTestAEAD(t *testing.T, letter string) cipher.AEAD {
	t.Helper()
	a, err := newAEAD([]byte(strings.Repeat(letter, KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	return a
}
