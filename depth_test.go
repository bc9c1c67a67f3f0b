package engram

import "testing"

func TestDepth(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int
	}{
		{"x", 0},
		{map[string]any{}, 1},
		{map[string]any{"a": 1}, 1},
		{map[string]any{"a": []any{}}, 2},
		{map[string]any{"a": []any{1, map[string]any{"b": []any{2}}}, "c": 3}, 4},
		{[]any{[]any{[]any{}}}, 3},
	} {
		if got := depth(c.v, 100); got != c.want {
			t.Errorf("depth(%v) = %d, want %d", c.v, got, c.want)
		}
	}
	// The count stops at the limit: a 10,000-deep value costs no more than
	// the limit's levels.
	var v any = 1
	for range 10000 {
		v = []any{v}
	}
	if got := depth(v, MaxMetadataDepth+1); got != MaxMetadataDepth+1 {
		t.Errorf("depth of 10,000 levels with limit %d = %d", MaxMetadataDepth+1, got)
	}
}
