package http

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/engramhq/engram"
)

// DefaultMaxImportRecords is the most records one POST /v1/import takes
// unless ServerOptions.MaxImportRecords says otherwise; it matches the most
// one engine Import call takes.
const DefaultMaxImportRecords = 100_000

// importLimits bound what one import body may hold, so that the records
// decoded in memory are bounded however the body is shaped: at most
// records of them, each at most recordBytes of JSON (the whole body is
// bounded by the route's MaxImportBytes).
type importLimits struct {
	records     int
	recordBytes int64
}

// readRecords decodes the records of an import body as it arrives: NDJSON
// (one record a line, blank lines skipped) or, when the body starts with
// "[", one JSON array of records. Errors name the line or item; more
// records than the limit, or one record longer than its limit, is
// ETOOLARGE naming the limit; a record outside the binding of the key k is
// EFORBIDDEN.
func readRecords(body io.Reader, k *engram.APIKey, lim importLimits) ([]engram.Record, error) {
	br := bufio.NewReaderSize(body, 64<<10)
	first, err := firstByte(br)
	if err != nil {
		return nil, bodyError("request body", err)
	}
	if first == '[' {
		return readArray(br, k, lim)
	}
	return readLines(br, k, lim)
}

// firstByte returns the first byte of br that is not JSON white space,
// without consuming it; 0 for an empty body.
func firstByte(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.ReadByte()
		if err == io.EOF {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
			return b, br.UnreadByte()
		}
	}
}

// readLines decodes NDJSON records.
func readLines(br *bufio.Reader, k *engram.APIKey, lim importLimits) ([]engram.Record, error) {
	var recs []engram.Record
	for line := 1; ; line++ {
		b, err := readLine(br, lim.recordBytes)
		if errors.Is(err, errLongRecord) {
			return nil, engram.Errorf(engram.ETOOLARGE, "request body line %d is longer than the limit of %d bytes for one record", line, lim.recordBytes)
		}
		if err != nil && err != io.EOF {
			return nil, bodyError("request body", err)
		}
		if len(bytes.TrimSpace(b)) > 0 {
			if len(recs) == lim.records {
				return nil, tooManyRecords(lim.records)
			}
			var rec engram.Record
			if derr := decodeJSONFor(k, bytes.NewReader(b), &rec, fmt.Sprintf("request body line %d", line)); derr != nil {
				return nil, derr
			}
			recs = append(recs, rec)
		}
		if err == io.EOF {
			return recs, nil
		}
	}
}

var errLongRecord = errors.New("record too long")

// readLine returns the next line of br without holding more than max bytes
// of it: errLongRecord when it is longer, io.EOF with the last line.
func readLine(br *bufio.Reader, max int64) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if int64(len(line)+len(chunk)) > max+1 { // +1: the newline
			return nil, errLongRecord
		}
		line = append(line, chunk...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// readArray decodes a JSON array of records an item at a time.
func readArray(br *bufio.Reader, k *engram.APIKey, lim importLimits) ([]engram.Record, error) {
	dec := json.NewDecoder(br)
	if _, err := dec.Token(); err != nil { // the "[" firstByte saw
		return nil, bodyError("request body", err)
	}
	var recs []engram.Record
	for item := 0; dec.More(); item++ {
		what := fmt.Sprintf("request body [%d]", item)
		if len(recs) == lim.records {
			return nil, tooManyRecords(lim.records)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bodyError(what, err)
		}
		if int64(len(raw)) > lim.recordBytes {
			return nil, engram.Errorf(engram.ETOOLARGE, "%s is longer than the limit of %d bytes for one record", what, lim.recordBytes)
		}
		var rec engram.Record
		if err := decodeJSONFor(k, bytes.NewReader(raw), &rec, what); err != nil {
			return nil, err
		}
		recs = append(recs, rec)
	}
	if _, err := dec.Token(); err != nil { // the closing "]"
		return nil, bodyError("request body", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, bodyError("request body", err)
		}
		return nil, engram.Errorf(engram.EINVALID, "request body has more data after the JSON array (at byte %d)", dec.InputOffset())
	}
	return recs, nil
}

func tooManyRecords(limit int) error {
	return engram.Errorf(engram.ETOOLARGE, "request body holds more than %d records, the limit for one import (engram serve --max-import-records); send them in several imports, as engram import does", limit)
}
