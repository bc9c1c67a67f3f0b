package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/engramhq/engram"
)

// openInput opens a named input file, "-" meaning stdin. The returned size is
// -1 when unknown.
func (m *Main) openInput(name string) (io.ReadCloser, int64, error) {
	if name == "-" {
		return io.NopCloser(m.Stdin), -1, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, 0, err
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, nil
}

// readJSONL decodes each non-blank line of r into a new T and passes it to
// fn with the line's length in bytes. Unknown fields
// are an error rather than silently dropped, because dropping them would
// lose data the user meant to store. Errors are EINVALID and name the line.
func readJSONL[T any](r io.Reader, name string, fn func(v *T, size int) error) error {
	br := bufio.NewReader(r)
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			v := new(T)
			dec := json.NewDecoder(bytes.NewReader(t))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(v); derr != nil {
				return engram.Errorf(engram.EINVALID, "%s line %d: %v", name, line, derr)
			}
			if dec.More() {
				return engram.Errorf(engram.EINVALID, "%s line %d: more than one JSON value on the line", name, line)
			}
			if ferr := fn(v, len(b)); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// inputName is how messages refer to an input file.
func inputName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}
