package entity_test

import (
	"slices"
	"testing"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/entity"
)

func TestExtract(t *testing.T) {
	for _, c := range []struct {
		name string
		m    engram.Memory
		want []entity.Candidate
	}{
		{"english speaker, place and person", engram.Memory{Value: "Yesterday I went hiking in Yosemite with Melanie.", Language: "en",
			Metadata: map[string]any{engram.MetaSpeaker: "Caroline"}},
			[]entity.Candidate{{"Caroline", engram.EntityPerson}, {"Yosemite", engram.EntityPlace}, {"Melanie", engram.EntityPerson}}},
		// Every German noun is capitalised: Wochenende, Schwester and
		// Bäckerei are not names; Lissabon after "nach" is a place.
		{"german nouns are not names", engram.Memory{Value: "Am Wochenende fährt meine Schwester Grete nach Lissabon und besucht die Bäckerei.", Language: "de"},
			[]entity.Candidate{{"Grete", engram.EntityPerson}, {"Lissabon", engram.EntityPlace}}},
		{"spanish", engram.Memory{Value: "Mañana voy a Sevilla con Lucía para ver a la tía Carmen.", Language: "es"},
			[]entity.Candidate{{"Sevilla", ""}, {"Lucía", engram.EntityPerson}, {"Carmen", ""}}},
		{"cues, not dates", engram.Memory{Value: "我们下周去北京", Language: "zh", Cues: []string{"北京", "7 May 2023", "the week of 8 May 2023"}},
			[]entity.Candidate{{"北京", ""}}},
		{"a quoted title is a work", engram.Memory{Value: `I loved reading "Charlotte's Web" as a kid.`, Cues: []string{"Charlotte's Web"}},
			[]entity.Candidate{{"Charlotte's Web", engram.EntityWork}}},
		// Where someone works is an organisation, whatever the preposition;
		// the same prepositions without work still make places.
		{"german employer", engram.Memory{Value: "Ich arbeite seit Mai bei Siemens.", Language: "de"},
			[]entity.Candidate{{"Siemens", engram.EntityOrganization}}},
		{"english employer", engram.Memory{Value: "I started working at Acme Corp and moved to Denver.", Language: "en"},
			[]entity.Candidate{{"Acme Corp", engram.EntityOrganization}, {"Denver", engram.EntityPlace}}},
		{"spanish employer and place", engram.Memory{Value: "Trabajo en Telefónica y vivo en Madrid.", Language: "es"},
			[]entity.Candidate{{"Telefónica", engram.EntityOrganization}, {"Madrid", engram.EntityPlace}}},
		{"french employer", engram.Memory{Value: "Je travaille chez Renault depuis 2020.", Language: "fr"},
			[]entity.Candidate{{"Renault", engram.EntityOrganization}}},
		{"bei without work is a place", engram.Memory{Value: "Wir wohnen jetzt bei Potsdam.", Language: "de"},
			[]entity.Candidate{{"Potsdam", engram.EntityPlace}}},
		{"vault memories name nothing", engram.Memory{Kind: engram.KindVault, Value: "Grete's PIN is 1234", Cues: []string{"Grete"}}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := entity.Extract(&c.m, nil)
			if !slices.Equal(got, c.want) {
				t.Errorf("Extract = %v, want %v", got, c.want)
			}
		})
	}
}

// TestExtractKnownOpener: a known name that starts a sentence is a name;
// unknown, it is not.
func TestExtractKnownOpener(t *testing.T) {
	m := &engram.Memory{Value: "Melanie and I camped in Yosemite. Camping is fun.", Language: "en"}
	if got := entity.Openers(m.Value); !slices.Equal(got, []string{"Melanie", "Camping"}) {
		t.Errorf("Openers = %v", got)
	}
	if got := entity.Extract(m, nil); !slices.Equal(got, []entity.Candidate{{"Yosemite", engram.EntityPlace}}) {
		t.Errorf("Extract without known = %v", got)
	}
	if got := entity.Extract(m, map[string]bool{"melanie": true}); !slices.Equal(got, []entity.Candidate{{"Melanie", ""}, {"Yosemite", engram.EntityPlace}}) {
		t.Errorf("Extract with Melanie known = %v", got)
	}
}
