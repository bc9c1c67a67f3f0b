package formation

import "testing"

// TestVerbReading: a fact rule's verb counts where a verb stands, not after
// a determiner, a preposition, a negation, a condition or another verb.
func TestVerbReading(t *testing.T) {
	for _, tt := range []struct {
		tag, text string
		facts     int
	}{
		{"es", "Trabajo en Telefónica.", 1},
		{"es", "Vivo en Sevilla y trabajo en Iberia.", 2},
		{"es", "Tengo una entrevista de trabajo en Valencia.", 0},
		{"es", "Vimos un concierto en vivo en Barcelona.", 0},
		{"es", "Necesito trabajo en Madrid.", 0},
		{"es", "No trabajo en Google.", 0},
		{"en", "If I live in Paris, I will learn French.", 0},
		{"en", "I live in Paris.", 1},
		{"de", "Ich wohne in Hamburg.", 1},
		{"fr", "Je travaille chez Renault.", 1},
		{"fr", "Si j'habite à Paris, je prendrai le métro.", 0},
	} {
		if got := factsOf(tt.tag, tt.text); len(got) != tt.facts {
			t.Errorf("factsOf(%s, %q) = %v, want %d facts", tt.tag, tt.text, got, tt.facts)
		}
	}
	for in, want := range map[string]string{"": "", "Busco ": "busco", "Hola, ": "", "Si j'": "j'", "de l'": "l'"} {
		if got := wordBefore(in); got != want {
			t.Errorf("wordBefore(%q) = %q, want %q", in, got, want)
		}
	}
}
