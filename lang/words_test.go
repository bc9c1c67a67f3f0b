package lang_test

import (
	"testing"

	"github.com/engramhq/engram/lang"
)

func TestIsStopWord(t *testing.T) {
	tests := []struct {
		tag, w string
		want   bool
	}{
		{"en", "the", true},
		{"en", "dog", false},
		{"", "the", true},
		{"zh", "the", true}, // no list of its own: English's
		{"de", "der", true},
		{"de", "meinem", true},
		{"de", "hund", false},
		{"de", "the", false},
		{"es", "qué", true},
		{"es", "perro", false},
		{"fr", "avec", true},
		{"fr", "chien", false},
		{"it", "della", true},
		{"pt", "você", true},
		{"nl", "het", true},
		{"nl", "hond", false},
	}
	for _, tt := range tests {
		if got := lang.IsStopWord(tt.tag, tt.w); got != tt.want {
			t.Errorf("IsStopWord(%q, %q) = %v, want %v", tt.tag, tt.w, got, tt.want)
		}
	}
}

func TestStem(t *testing.T) {
	tests := []struct {
		tag, w, want string
	}{
		{"en", "running", "run"},
		{"de", "hunden", "hund"},
		{"de", "wochen", "woch"},
		{"es", "perros", "perr"},
		{"fr", "chiens", "chien"},
		{"it", "gatti", "gatt"},
		{"pt", "cachorros", "cachorr"},
		{"nl", "honden", "hond"},
		{"zh", "公园", "公园"},
		{"", "running", "running"},
		{"xx", "running", "running"},
	}
	for _, tt := range tests {
		if got := lang.Stem(tt.tag, tt.w); got != tt.want {
			t.Errorf("Stem(%q, %q) = %q, want %q", tt.tag, tt.w, got, tt.want)
		}
	}
}
