package lang_test

import (
	"reflect"
	"testing"

	"github.com/engramhq/engram/lang"
)

func TestNames(t *testing.T) {
	tests := []struct {
		tag, text string
		known     []string
		want      []string
	}{
		{"en", "I went hiking with Caroline and Melanie in New York.", nil, []string{"Caroline", "Melanie", "New York"}},
		{"", "Yesterday I met Caroline.", nil, []string{"Caroline"}},
		{"de", "Wann war ich letzte Woche mit meinem Hund im Park?", nil, nil},
		// München ends like a diminutive (Mädchen): the rule misses it.
		{"de", "Gestern war ich mit Anna in München.", nil, []string{"Anna"}},
		{"de", "Gestern war ich mit Anna in Berlin.", nil, []string{"Anna", "Berlin"}},
		{"de", "Anna hat mir gestern eine Nachricht geschickt.", []string{"anna"}, []string{"Anna"}},
		{"de", "Anna hat mir gestern eine Nachricht geschickt.", nil, nil},
		{"de", "Die Wohnung in der Stadt ist zu teuer.", nil, nil},
		{"de", "Ich wohne seit drei Jahren in Berlin und habe 2 Katzen.", nil, []string{"Berlin"}},
		{"es", "Ayer fui al parque con María y Juan.", nil, []string{"María", "Juan"}},
		{"es", "Hola, ¿Qué tal?", nil, nil},
		{"es", "Estudié en la Universidad de Salamanca.", nil, []string{"Universidad de Salamanca"}},
		{"fr", "Hier, je suis allé au parc avec Marie.", nil, []string{"Marie"}},
		{"fr", "Merci, Bonjour à tous.", nil, nil},
		{"zh", "我和Anna去了公园。", nil, nil},
		{"ja", "アンナと公園に行きました。", nil, nil},
	}
	for _, tt := range tests {
		known := map[string]bool{}
		for _, k := range tt.known {
			known[k] = true
		}
		if got := lang.Names(tt.tag, tt.text, known); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Names(%q, %q) = %q, want %q", tt.tag, tt.text, got, tt.want)
		}
	}
}

func TestNameKeys(t *testing.T) {
	tests := []struct {
		tag, text string
		want      map[string]bool
	}{
		{"en", "I met Caroline. She likes Paris.", map[string]bool{"caroline": true, "paris": true}},
		{"de", "Ich war mit Anna im Park.", map[string]bool{"anna": true}},
		{"zh", "我和Anna去了公园。", map[string]bool{}},
	}
	for _, tt := range tests {
		if got := lang.NameKeys(tt.tag, tt.text); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("NameKeys(%q, %q) = %v, want %v", tt.tag, tt.text, got, tt.want)
		}
	}
}

func TestTitles(t *testing.T) {
	got := lang.Titles(`Ich lese „Der Process“ und « Le Petit Prince ».`)
	if want := []string{"Der Process", "Le Petit Prince"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Titles = %q, want %q", got, want)
	}
}
