package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/engramhq/engram"
)

// bodyTypes are the JSON request bodies the server decodes.
var bodyTypes = []reflect.Type{
	reflect.TypeFor[engram.AddEpisodesRequest](),
	reflect.TypeFor[engram.AddMemoriesRequest](),
	reflect.TypeFor[engram.SearchRequest](),
	reflect.TypeFor[engram.MemoryPatch](),
	reflect.TypeFor[engram.SupersedeRequest](),
	reflect.TypeFor[listMemoriesRequest](),
	reflect.TypeFor[rollbackRequest](),
	reflect.TypeFor[reasonRequest](),
	reflect.TypeFor[embeddingsRequest](),
	reflect.TypeFor[engram.Record](),
}

// checkClientError fails t unless err is nil or an engram error whose
// status is in the 4xx class: whatever a client sends, a decoder blames
// the request.
func checkClientError(t *testing.T, what string, in any, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *engram.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s(%q): error %v is not an engram error", what, in, err)
	}
	if st := ErrorStatus(e.Code); st < 400 || st > 499 {
		t.Fatalf("%s(%q): error %v has status %d, not a client error", what, in, err, st)
	}
	if e.Message == "" {
		t.Fatalf("%s(%q): error with code %s has no message", what, in, e.Code)
	}
}

// FuzzDecodeJSON decodes arbitrary bytes as every request body: the result
// is a request or a coded client error, never a panic; and a decoded
// request, encoded and decoded again, encodes to the same JSON (the
// decoder loses nothing the encoder writes, and normalizes idempotently).
func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{
		`{"namespace":{"org":"acme","project":"app","user":"u1"},"episodes":[{"role":"user","content":"hi","occurred_at":"2024-05-01T12:00:00+02:00","metadata":{"n":1.50,"big":12345678901234567890}}]}`,
		`{"namespace":{"org":"acme","project":"app"},"memories":[{"kind":"fact","value":"likes tea","cues":["tea"],"confidence":0.9}]}`,
		`{"scope":{"org":"acme","project":"app","include_shared":true},"query":"tea","k":5}`,
		`{"kind":"preference","cues":null,"metadata":{"a":[1,{"b":null}]}}`,
		`{"new":{"value":"x"},"at":"2024-05-01T00:00:00Z","reason":"r"}`,
		`{"scope":{},"filter":{"kinds":["fact"],"metadata":{"k":"v"}}}`,
		`{"version":0}`, `{"reason":""}`, `{"input":["a","b"],"model":"m"}`,
		`{"type":"memory","memory":{"id":"x"}}`,
		``, ` `, `null`, `[]`, `{}`, `{} {}`, `{"episodes":[1]}`, `{"episodes":[{"occurred_at":5}]}`,
		`{"Namespace":{"ORG":"a"}}`, `{"namespace":{"org":"Cafe\u0301"}}`, `"\ud800"`, "{\"query\":\"\xff\"}",
		`{"k":1e400}`, `{"k":-0}`, `{"query":"a"`, `{"a":1,"a":2}`,
	} {
		for i := range bodyTypes {
			f.Add([]byte(s), uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, which uint8) {
		typ := bodyTypes[int(which)%len(bodyTypes)]
		v := reflect.New(typ).Interface()
		err := decodeJSON(bytes.NewReader(body), v, "request body")
		checkClientError(t, "decodeJSON "+typ.String(), body, err)
		if err != nil {
			return
		}
		enc1, err := json.Marshal(v)
		if err != nil {
			// Only values no JSON text decodes to fail to encode.
			t.Fatalf("%s decoded from %q does not encode: %v", typ, body, err)
		}
		v2 := reflect.New(typ).Interface()
		if err := decodeJSON(bytes.NewReader(enc1), v2, "request body"); err != nil {
			t.Fatalf("%s decoded from %q encodes to %s, which does not decode: %v", typ, body, enc1, err)
		}
		enc2, err := json.Marshal(v2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc1, enc2) {
			t.Fatalf("%s decoded from %q: encodes to\n%s\nthen to\n%s", typ, body, enc1, enc2)
		}
	})
}

// FuzzImportBody reads arbitrary bytes as an NDJSON import body: records
// or a coded client error naming a line.
func FuzzImportBody(f *testing.F) {
	for _, s := range []string{
		"", "\n\n", `{"type":"episode","episode":{"id":"x"}}` + "\n" + `{"type":"audit"}`,
		"{\"type\":\"memory\"}\r\n\r\n{", "{}\n[]\n", "{\"type\":\"memory\"} {}\n", "\x00\n\xff",
		"[]", " [{\"type\":\"audit\"}, {}]", "[{}] x", "[{\"type\":\"episode\"},",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := readRecords(bytes.NewReader(body), nil, importLimits{records: 50, recordBytes: 4 << 10})
		checkClientError(t, "readRecords", body, err)
		// A record takes a line of NDJSON, or an item of a JSON array.
		most := bytes.Count(body, []byte("\n")) + 1
		if bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
			most = bytes.Count(body, []byte(",")) + 1
		}
		if err == nil && (len(recs) > most || len(recs) > 50) {
			t.Fatalf("readRecords(%q): %d records from %d lines or items, limit 50", body, len(recs), most)
		}
	})
}

// FuzzQueryString parses arbitrary query strings against the parameters
// of every route and reads every parameter the way the handlers do: a
// coded client error or values, never a panic; and every metadata value
// read survives the client's encoding (encodeMetaValue) unchanged.
func FuzzQueryString(f *testing.F) {
	for _, s := range []string{
		"", "org=acme&project=app&user=u1", "limit=10&cursor=abc", "limit=x", "limit=99999999999999999999",
		"include_shared=maybe", "valid_at=2024-05-01T12:00:00+02:00", "valid_at=2024-05-01T12:00:00 02:00",
		"meta.n=3&meta.s=%223%22&meta.city=Paris", "meta_in.k=1&meta_in.k=%5B1%2C2%5D", "meta.=x", "meta.k=%ff",
		"kind=fact&kind=event&status=active", "org=a&org=b", "%zz", "a;b", "hard=true&reason=r", "nope=1&zzz=2",
		"meta.k=%7B%22a%22%3A1e400%7D", "meta.k=1.0", "meta.k=%20true",
	} {
		f.Add(s)
	}
	routes := NewServer(nil, ServerOptions{}).routes
	f.Fuzz(func(t *testing.T, raw string) {
		for _, rt := range routes {
			q, err := parseQuery(raw, rt.params)
			checkClientError(t, "parseQuery "+rt.path, raw, err)
			if err != nil {
				continue
			}
			_, err = q.scope()
			checkClientError(t, "scope", raw, err)
			for _, p := range rt.params {
				if prefix, ok := p.prefix(); ok {
					m, err := q.meta(prefix)
					checkClientError(t, "meta", raw, err)
					for k, v := range m {
						checkMetaRoundTrip(t, prefix+k, v)
					}
					mi, err := q.metaIn(prefix)
					checkClientError(t, "metaIn", raw, err)
					for k, vs := range mi {
						for _, v := range vs {
							checkMetaRoundTrip(t, prefix+k, v)
						}
					}
					continue
				}
				_ = q.str(p.name)
				_ = q.list(p.name)
				_, err := q.time(p.name)
				checkClientError(t, "time", raw, err)
				_, err = q.int(p.name)
				checkClientError(t, "int", raw, err)
				_, err = q.bool(p.name)
				checkClientError(t, "bool", raw, err)
			}
		}
	})
}

func checkMetaRoundTrip(t *testing.T, name string, v any) {
	t.Helper()
	s, err := encodeMetaValue(v)
	if err != nil {
		t.Fatalf("%s: value %#v does not encode: %v", name, v, err)
	}
	back, err := metaValue(name, s)
	if err != nil {
		t.Fatalf("%s: value %#v encodes to %q, which does not decode: %v", name, v, s, err)
	}
	if !reflect.DeepEqual(back, v) {
		t.Fatalf("%s: value %#v encodes to %q, which decodes to %#v", name, v, s, back)
	}
}
