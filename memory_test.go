package engram_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

func TestMemoryClone(t *testing.T) {
	at := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	m := &engram.Memory{
		ID: "m1", Value: "v", Cues: []string{"a"}, Sources: []string{"e1"},
		ValidFrom: &at, LastAccessed: &at,
		Metadata: map[string]any{"tags": []any{"x", map[string]any{"k": "v"}}, "n": 1.0, "m": map[string]string{"a": "b"}},
	}
	c := m.Clone()
	if !reflect.DeepEqual(c, m) {
		t.Fatalf("clone %+v differs from %+v", c, m)
	}
	c.Cues[0], c.Sources[0] = "changed", "changed"
	*c.ValidFrom = at.Add(time.Hour)
	*c.LastAccessed = at.Add(time.Hour)
	c.Metadata["tags"].([]any)[1].(map[string]any)["k"] = "changed"
	c.Metadata["m"].(map[string]string)["a"] = "changed"
	c.Metadata["new"] = true
	want := &engram.Memory{
		ID: "m1", Value: "v", Cues: []string{"a"}, Sources: []string{"e1"},
		ValidFrom: &at, LastAccessed: &at,
		Metadata: map[string]any{"tags": []any{"x", map[string]any{"k": "v"}}, "n": 1.0, "m": map[string]string{"a": "b"}},
	}
	if !reflect.DeepEqual(m, want) || !m.ValidFrom.Equal(at) {
		t.Fatalf("changing the clone changed the original: %+v", m)
	}
}
