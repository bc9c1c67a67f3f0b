package storeutil

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/engramhq/engram"
)

// MarshalText encodes v as JSON without HTML escaping and without the
// encoder's trailing newline, so the stored text is what a substring filter
// expects and both backends store the same bytes. The encoder's error is
// returned unwrapped for the caller to word.
func MarshalText(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// UnmarshalNumbers decodes one JSON value from b into v keeping numbers as
// json.Number, so metadata numbers come back with every digit they were
// stored with. It fails on malformed JSON or on data after the value.
func UnmarshalNumbers(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}

// DecodeMap decodes a JSON object column with UnmarshalNumbers. NULL (no
// bytes) and an empty object both give nil; a malformed value is an error
// wrapped with "decode json object".
func DecodeMap(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := UnmarshalNumbers(b, &m); err != nil {
		return nil, fmt.Errorf("decode json object: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// DecodeStrings decodes a JSON array-of-strings column. NULL (no bytes) and
// an empty array both give nil; a malformed value is an error wrapped with
// "decode json array".
func DecodeStrings(b []byte) ([]string, error) { return decodeArray[string](b, "json array") }

// decodeArray decodes a JSON array of T, what it holds named by what in
// its error; NULL (no bytes) and an empty array both give nil.
func decodeArray[T any](b []byte, what string) ([]T, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var s []T
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("decode %s: %w", what, err)
	}
	if len(s) == 0 {
		return nil, nil
	}
	return s, nil
}

// NonNil returns s, or an empty list when s is nil, so that it encodes
// as a JSON array, never null.
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// opWire is how a job's operation is kept in a store.
type opWire struct {
	Op       engram.Op     `json:"op"`
	TargetID string        `json:"target_id,omitempty"`
	Memory   engram.Memory `json:"memory"`
	Reason   string        `json:"reason,omitempty"`
}

// EncodeOps encodes a job's operations as a JSON array ("[]" for none).
func EncodeOps(ops []engram.MemoryOp) ([]byte, error) {
	w := make([]opWire, len(ops))
	for i, op := range ops {
		w[i] = opWire{Op: op.Op, TargetID: op.TargetID, Memory: op.Memory, Reason: op.Reason}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("encode job operations: %w", err)
	}
	return b, nil
}

// DecodeOps decodes what EncodeOps wrote; nil for none.
func DecodeOps(b []byte) ([]engram.MemoryOp, error) {
	w, err := decodeArray[opWire](b, "job operations")
	if err != nil || w == nil {
		return nil, err
	}
	ops := make([]engram.MemoryOp, len(w))
	for i, o := range w {
		ops[i] = engram.MemoryOp{Op: o.Op, TargetID: o.TargetID, Memory: o.Memory, Reason: o.Reason}
	}
	return ops, nil
}
