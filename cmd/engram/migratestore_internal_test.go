package main

import (
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
)

// TestSummary checks the verification tally: it ignores order but sees a
// changed field, a missing record and a record counted twice.
func TestSummary(t *testing.T) {
	ns := engram.Namespace{Org: "o", Project: "p"}
	mem := func(id, value string) engram.DumpRecord {
		return engram.DumpRecord{Record: engram.Record{Type: engram.RecordMemory, Memory: &engram.Memory{ID: id, Namespace: ns, Value: value}}}
	}
	meta := engram.DumpRecord{Record: engram.Record{Type: engram.RecordMeta}, Meta: &engram.MetaEntry{Key: "embedder", Value: "use-lite"}}
	tally := func(recs ...engram.DumpRecord) summary {
		s := summary{}
		for _, r := range recs {
			if err := s.add(r); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	a, b, c := mem("a", "x"), mem("b", "y"), mem("c", "z")
	base := tally(a, b, c, meta)
	for _, tt := range []struct {
		name string
		s    summary
		same bool
	}{
		{"same records in another order", tally(meta, c, a, b), true},
		{"a changed value", tally(a, mem("b", "Y"), c, meta), false},
		{"a missing record", tally(a, b, meta), false},
		{"a record twice instead of another", tally(a, a, c, meta), false},
		{"a record twice in all", tally(a, b, b, b, c, meta), false},
		{"meta missing", tally(a, b, c), false},
		// The index store id is not copied, so it is not tallied either.
		{"the index store id beside", tally(a, b, c, meta, engram.DumpRecord{Record: engram.Record{Type: engram.RecordMeta}, Meta: &engram.MetaEntry{Key: engine.MetaIndexStore, Value: "x"}}), true},
	} {
		same := len(tt.s) == len(base)
		for k, v := range base {
			same = same && tt.s[k] == v
		}
		if same != tt.same {
			t.Errorf("%s: tallies equal = %v, want %v", tt.name, same, tt.same)
		}
	}
	if got, want := base[engram.RecordMemory].count, 3; got != want {
		t.Errorf("memory count = %d, want %d", got, want)
	}
	if got, want := base.total(), 4; got != want {
		t.Errorf("total = %d, want %d", got, want)
	}
}
