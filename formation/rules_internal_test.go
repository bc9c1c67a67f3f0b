package formation

import (
	"testing"

	"github.com/engramhq/engram/lang"
)

// TestFactsOf: everyday first-person statements give their attribute and
// value in each language with rules; what others do, questions and the
// past give none.
func TestFactsOf(t *testing.T) {
	for _, tc := range []struct {
		text, attr, value string
	}{
		{"I live in New York City with my cat.", "residence", "New York City"},
		{"Honestly, I'm now living in Frankfurt am Main.", "residence", "Frankfurt am Main"},
		{"I just moved to Lisbon!", "residence", "Lisbon"},
		{"I work at Google.", "workplace", "Google"},
		{"I started working at Acme Corp last week.", "workplace", "Acme Corp"},
		{"I'm working as a nurse now.", "occupation", "nurse"},
		{"I'm vegan.", "diet", "vegan"},
		{"I got engaged!", "relationship", "engaged"},
		{"My favourite colour is dark green, by the way.", "favourite colour", "dark green"},
		{"I have three cats.", "count of cat", "three"},
		{"Ich wohne jetzt in Hamburg.", "residence", "Hamburg"},
		{"Ich bin letzten Monat nach München gezogen.", "residence", "München"},
		{"Ich arbeite seit Mai bei Siemens.", "workplace", "Siemens"},
		{"Meine Lieblingsfarbe ist Blau.", "favourite farb", "Blau"},
		{"Ich habe zwei Hunde.", "count of hund", "zwei"},
		{"Vivo en Buenos Aires.", "residence", "Buenos Aires"},
		{"Me mudé a Madrid el año pasado.", "residence", "Madrid"},
		{"Trabajo en Telefónica.", "workplace", "Telefónica"},
		{"Mi color favorito es el rojo.", "favourite color", "el rojo"},
		{"Estoy casada.", "relationship", "casada"},
		{"J'habite à Lyon.", "residence", "Lyon"},
		{"Je travaille chez Renault.", "workplace", "Renault"},
	} {
		fs := factsOf(lang.Detect(tc.text), tc.text)
		if len(fs) != 1 || fs[0].attr != tc.attr || fs[0].value != tc.value {
			t.Errorf("factsOf(%q) = %+v, want %s = %q", tc.text, fs, tc.attr, tc.value)
		}
	}
	for _, text := range []string{
		"My sister lives in Rome.", "Do you live in Berlin?", "Where do I live?", "I used to live in Paris.",
		"Meine Schwester wohnt in Rom.", "Wohnst du in Berlin?", "Mi hermana vive en Roma.", "¿Vives en Berlín?",
		"I have ten minutes.", "I want to live in Spain someday.", "Mon frère habite à Nice.",
	} {
		if fs := factsOf(lang.Detect(text), text); len(fs) != 0 {
			t.Errorf("factsOf(%q) = %+v, want none", text, fs)
		}
	}
}

// TestForgetTopic: requests to forget in English, German, Spanish and
// French give what they name; reminders, questions and idioms are none.
func TestForgetTopic(t *testing.T) {
	for _, tc := range []struct{ text, topic string }{
		{"Please forget that I live in Berlin.", "I live in Berlin."},
		{"Can you forget what I told you about my ex?", ""}, // a question
		{"Forget everything about my old job at Acme.", "my old job at Acme."},
		{"Don't remember that my PIN is 1234.", "my PIN is 1234."},
		{"Delete what I told you about the surgery.", "the surgery."},
		{"Vergiss bitte, dass ich in Berlin wohne.", "ich in Berlin wohne."},
		{"Lösche bitte, was ich über meine Diagnose gesagt habe.", "meine Diagnose gesagt habe."},
		{"Por favor, olvida que vivo en Berlín.", "vivo en Berlín."},
		{"Borra lo que te dije sobre mi jefe.", "mi jefe."},
		{"Oublie que j'habite à Lyon.", "j'habite à Lyon."},
	} {
		topic, _, _, ok := forgetTopic(lang.Detect(tc.text), tc.text)
		if ok != (tc.topic != "") || topic != tc.topic {
			t.Errorf("forgetTopic(%q) = %q, %v; want %q", tc.text, topic, ok, tc.topic)
		}
	}
	for _, text := range []string{
		"Don't forget to buy milk!", "Do you remember where I live?", "I forgot my keys.", "Forget it.",
		"Vergiss nicht, Milch zu kaufen!", "Weißt du noch, wo ich wohne?", "No olvides comprar leche.",
		"¿Recuerdas dónde vivo?", "N'oublie pas le pain.", "Forget about work for a while!",
	} {
		if topic, _, _, ok := forgetTopic(lang.Detect(text), text); ok {
			t.Errorf("forgetTopic(%q) = %q, want no request", text, topic)
		}
	}
	if _, stems, _, _ := forgetTopic(lang.English, "Forget what I told you about it."); len(stems) != 0 {
		t.Errorf("a request about nothing has content words %v", stems)
	}
}

// TestSimilarity: a repeat scores 1, a small change stays high, another
// statement stays low.
func TestSimilarity(t *testing.T) {
	if s := Similarity("Thanks, Nate! See you soon.", "thanks nate see you soon"); s != 1 {
		t.Errorf("repeat scores %v", s)
	}
	if s := Similarity("Take care, bye!", "Talk to you later, bye!"); s >= DefaultMergeAt {
		t.Errorf("different sentences score %v, at or above the merge threshold", s)
	}
	if s := Similarity("I love hiking in the Alps with my dog.", "I love hiking in the Alps with my dog!!"); s < DefaultMergeAt {
		t.Errorf("punctuation changes score %v", s)
	}
}
