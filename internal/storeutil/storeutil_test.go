package storeutil_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/internal/storeutil"
)

const id1 = "01J0000000000000000000000A"

func TestCursorRoundTrip(t *testing.T) {
	if !engram.ValidID(id1) {
		t.Fatalf("fixture id %q is not a valid id", id1)
	}
	c := storeutil.EncodeCursor('m', id1)
	got, err := storeutil.DecodeIDCursor('m', c)
	if err != nil {
		t.Fatal(err)
	}
	if got != id1 {
		t.Fatalf("DecodeIDCursor = %q, want %q", got, id1)
	}
	ec := storeutil.EncodeEpisodeCursor(-1234567, id1)
	us, eid, err := storeutil.DecodeEpisodeCursor(ec)
	if err != nil {
		t.Fatal(err)
	}
	if us != -1234567 || eid != id1 {
		t.Fatalf("DecodeEpisodeCursor = %d, %q", us, eid)
	}
}

func TestCursorRejects(t *testing.T) {
	tests := []struct {
		name string
		fn   func() error
	}{
		{"not base64", func() error { _, err := storeutil.DecodeCursor('m', "!!!"); return err }},
		{"too short", func() error { _, err := storeutil.DecodeCursor('m', storeutil.EncodeCursor('m', "")[:1]); return err }},
		{"other kind", func() error { _, err := storeutil.DecodeCursor('a', storeutil.EncodeCursor('m', "k")); return err }},
		{"bad id", func() error { _, err := storeutil.DecodeIDCursor('m', storeutil.EncodeCursor('m', "nope")); return err }},
		{"episode from memory list", func() error {
			_, _, err := storeutil.DecodeEpisodeCursor(storeutil.EncodeCursor('m', id1))
			return err
		}},
		{"episode without time", func() error {
			_, _, err := storeutil.DecodeEpisodeCursor(storeutil.EncodeCursor('e', "x:"+id1))
			return err
		}},
		{"episode without colon", func() error {
			_, _, err := storeutil.DecodeEpisodeCursor(storeutil.EncodeCursor('e', "12"))
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.fn()
			if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
				t.Fatalf("code = %q (%v), want %q", got, err, want)
			}
		})
	}
}

func TestVecRoundTrip(t *testing.T) {
	v := []float32{0, -1.5, float32(math.Inf(1)), 3.25e-7}
	b := storeutil.EncodeVec(v)
	// Little-endian layout is what stored data depends on: 1.0 is 0x3f800000.
	if got, want := storeutil.EncodeVec([]float32{1}), []byte{0, 0, 0x80, 0x3f}; !reflect.DeepEqual(got, want) {
		t.Fatalf("EncodeVec(1) = %x, want %x", got, want)
	}
	got, err := storeutil.DecodeVec(b, len(v))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("DecodeVec = %v, want %v", got, v)
	}
	for _, dim := range []int{0, -1, 3, 5} {
		if _, err := storeutil.DecodeVec(b, dim); err == nil {
			t.Errorf("DecodeVec(%d bytes, dim %d): no error", len(b), dim)
		}
	}
}

func TestJSON(t *testing.T) {
	b, err := storeutil.MarshalText(map[string]any{"a": "<&>"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"a":"<&>"}`; got != want {
		t.Fatalf("MarshalText = %q, want %q", got, want)
	}
	if _, err := storeutil.MarshalText(math.NaN()); err == nil {
		t.Fatal("MarshalText(NaN): no error")
	}

	m, err := storeutil.DecodeMap([]byte(`{"n": 12345678901234567890}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m["n"], json.Number("12345678901234567890"); got != want {
		t.Fatalf("DecodeMap number = %#v, want %#v", got, want)
	}
	for _, in := range []string{"", "{}", "null"} {
		if m, err := storeutil.DecodeMap([]byte(in)); err != nil || m != nil {
			t.Errorf("DecodeMap(%q) = %v, %v; want nil, nil", in, m, err)
		}
	}
	if _, err := storeutil.DecodeMap([]byte(`{} {}`)); err == nil || !strings.Contains(err.Error(), "trailing data") {
		t.Errorf("DecodeMap(two objects) error = %v, want trailing data", err)
	}
	if _, err := storeutil.DecodeMap([]byte(`[1]`)); err == nil {
		t.Error("DecodeMap(array): no error")
	}

	s, err := storeutil.DecodeStrings([]byte(`["a","b"]`))
	if err != nil || !reflect.DeepEqual(s, []string{"a", "b"}) {
		t.Fatalf("DecodeStrings = %v, %v", s, err)
	}
	for _, in := range []string{"", "[]"} {
		if s, err := storeutil.DecodeStrings([]byte(in)); err != nil || s != nil {
			t.Errorf("DecodeStrings(%q) = %v, %v; want nil, nil", in, s, err)
		}
	}
	if _, err := storeutil.DecodeStrings([]byte(`[1]`)); err == nil {
		t.Error("DecodeStrings([1]): no error")
	}
}

func TestCheckNames(t *testing.T) {
	long := strings.Repeat("k", storeutil.MaxMetaKey+1)
	tests := []struct {
		name string
		err  error
		ok   bool
	}{
		{"meta ok", storeutil.CheckMetaKey("schema"), true},
		{"meta max", storeutil.CheckMetaKey(long[1:]), true},
		{"meta empty", storeutil.CheckMetaKey(""), false},
		{"meta long", storeutil.CheckMetaKey(long), false},
		{"meta not utf8", storeutil.CheckMetaKey("\xff"), false},
		{"embedder ok", storeutil.CheckEmbedder("use-lite"), true},
		{"embedder empty", storeutil.CheckEmbedder(""), false},
		{"embedder long", storeutil.CheckEmbedder(strings.Repeat("e", storeutil.MaxEmbedderName+1)), false},
		{"embedder not utf8", storeutil.CheckEmbedder("\xfe"), false},
	}
	for _, tt := range tests {
		if tt.ok && tt.err != nil {
			t.Errorf("%s: %v", tt.name, tt.err)
		}
		if !tt.ok && engram.ErrorCode(tt.err) != engram.EINVALID {
			t.Errorf("%s: error %v, want EINVALID", tt.name, tt.err)
		}
	}
}

func TestCheckMemoryNeedsID(t *testing.T) {
	err := storeutil.CheckMemory(&engram.Memory{})
	if got, want := engram.ErrorCode(err), engram.EINVALID; got != want {
		t.Fatalf("code = %q (%v), want %q", got, err, want)
	}
}

func TestCheckFieldVectors(t *testing.T) {
	short := func(s string) string { return s[:min(len(s), 3)] }
	v2 := []float32{1, 2}
	tests := []struct {
		name string
		vecs []engram.FieldVector
		want string // substring of the error; "" for none
	}{
		{"none", nil, ""},
		{"both", []engram.FieldVector{{Field: engram.FieldAbstraction, Vec: v2}, {Field: engram.FieldValue, Vec: v2}}, ""},
		{"bad field shortened", []engram.FieldVector{{Field: "cuesxyz", Vec: v2}}, `"cue" is not`},
		{"twice", []engram.FieldVector{{Field: engram.FieldValue, Vec: v2}, {Field: engram.FieldValue, Vec: v2}}, "given twice"},
		{"empty", []engram.FieldVector{{Field: engram.FieldValue}}, "is empty"},
		{"lengths", []engram.FieldVector{{Field: engram.FieldValue, Vec: v2}, {Field: engram.FieldAbstraction, Vec: v2[:1]}}, "different lengths (2 and 1)"},
		{"nan", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{1, float32(math.NaN())}}}, "non-finite value at 1"},
		{"inf", []engram.FieldVector{{Field: engram.FieldValue, Vec: []float32{float32(math.Inf(-1))}}}, "non-finite value at 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := storeutil.CheckFieldVectors("M1", tt.vecs, short)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want EINVALID containing %q", err, tt.want)
			}
		})
	}
}

func TestMigrations(t *testing.T) {
	fsys := os.DirFS("testdata/migrations")
	ms, err := storeutil.Migrations(fsys, "ok")
	if err != nil {
		t.Fatal(err)
	}
	want := []storeutil.Migration{
		{Version: 1, Name: "0001_first.sql", SQL: "CREATE TABLE a (x);\n"},
		{Version: 2, Name: "0002_second.sql", SQL: "CREATE TABLE b (x);\n"},
	}
	if !reflect.DeepEqual(ms, want) {
		t.Fatalf("Migrations = %+v, want %+v", ms, want)
	}
	for dir, msg := range map[string]string{
		"dup":     "share a version",
		"bad":     "does not start with a version number",
		"missing": "",
	} {
		_, err := storeutil.Migrations(fsys, dir)
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("Migrations(%s) error = %v, want %q", dir, err, msg)
		}
	}
}

func TestLowerASCII(t *testing.T) {
	if got, want := storeutil.LowerASCII("AbC-ÄÖ-Z"), "abc-ÄÖ-z"; got != want {
		t.Fatalf("LowerASCII = %q, want %q", got, want)
	}
}

func TestCheckRecords(t *testing.T) {
	ns := engram.Namespace{Org: "o", Project: "p"}
	if err := ns.Validate(); err != nil {
		t.Fatalf("fixture namespace: %v", err)
	}
	short := func(s string) string { return s[:min(len(s), 4)] }
	tests := []struct {
		name string
		err  error
		want string // substring of an EINVALID error; "" for none
	}{
		{"episode no id", storeutil.CheckEpisode(&engram.Episode{}), ""},
		{"version ok", storeutil.CheckVersion(&engram.Version{Namespace: ns, MemoryID: id1, Version: 1, Op: "create"}, short), "-"},
		{"version bad id shortened", storeutil.CheckVersion(&engram.Version{Namespace: ns, MemoryID: "bad-id-long", Version: 1, Op: "x"}, short), `version: memory id "bad-" is not a valid id`},
		{"version zero", storeutil.CheckVersion(&engram.Version{Namespace: ns, MemoryID: id1, Op: "x"}, short), "number 0 is not positive"},
		{"version no op", storeutil.CheckVersion(&engram.Version{Namespace: ns, MemoryID: id1, Version: 2}, short), "op is required"},
		{"version bad namespace", storeutil.CheckVersion(&engram.Version{MemoryID: id1, Version: 1, Op: "x"}, short), ""},
		{"audit ok", storeutil.CheckAudit(&engram.AuditEntry{Namespace: ns, ID: id1, Op: "add"}, short), "-"},
		{"audit bad id", storeutil.CheckAudit(&engram.AuditEntry{Namespace: ns, ID: "zzzzzz", Op: "add"}, short), `audit id "zzzz" is not a valid id`},
		{"audit no op", storeutil.CheckAudit(&engram.AuditEntry{Namespace: ns, ID: id1}, short), "audit: op is required"},
		{"put vectors ok", storeutil.CheckPutVectors(ns, id1, "e", nil, short, storeutil.CheckEmbedder), "-"},
		{"put vectors bad id", storeutil.CheckPutVectors(ns, "nope!", "e", nil, short, storeutil.CheckEmbedder), `memory id "nope" is not a valid id`},
		{"put vectors bad embedder", storeutil.CheckPutVectors(ns, id1, "", nil, short, storeutil.CheckEmbedder), "embedder name"},
		{"put vectors embedder hook", storeutil.CheckPutVectors(ns, id1, "e", nil, short, func(string) error {
			return engram.Errorf(engram.EINVALID, "hook refused")
		}), "hook refused"},
		{"put vectors bad vector", storeutil.CheckPutVectors(ns, id1, "e", []engram.FieldVector{{Field: engram.FieldValue}}, short, storeutil.CheckEmbedder), "is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.want == "-" {
				if tt.err != nil {
					t.Fatal(tt.err)
				}
				return
			}
			if engram.ErrorCode(tt.err) != engram.EINVALID || !strings.Contains(fmt.Sprint(tt.err), tt.want) {
				t.Fatalf("error = %v, want EINVALID containing %q", tt.err, tt.want)
			}
		})
	}
}
