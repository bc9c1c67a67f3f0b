package uselite

import (
	"slices"
	"testing"
)

// TestTokenizerRules pins the quirks of the JavaScript tokenizer on a tiny
// vocabulary where each rule decides the outcome.
func TestTokenizerRules(t *testing.T) {
	vocab := `[["\ufffd",0],["<s>",0],["</s>",0],["x1",0],["x2",0],["x3",0],
		["▁a",-1],["b",-1],["▁ab",-2],["▁",-1],["a",-1],["▁:",null],[":",null],["c",-0.5]]`
	tok, err := newTokenizer([]byte(vocab))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		text string
		want []int32
	}{
		// ▁ab and ▁a+b both score -2: the later candidate (start 2) wins.
		{"ab", []int32{6, 7}},
		// Unmatched symbols become one unknown id per run.
		{"a€€b", []int32{6, 0, 7}},
		{"€", []int32{9, 0}},
		// ▁: scores exactly 0, which counts as "unset", so ':' replaces it.
		{":", []int32{9, 12}},
		{"", []int32{}},
		// NFKC folds the fullwidth letter; spaces become word boundaries.
		{"ａb c", []int32{6, 7, 9, 13}},
		// Reserved pieces are never matched.
		{"x1", []int32{9, 0}},
	} {
		if got := tok.encode(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("encode(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}
