package lang_test

import (
	"testing"
	"time"

	"github.com/engramhq/engram/lang"
)

// TestResolveByTense resolves weekdays and relative dates by the tense of
// their sentence, at the turn of a week and a year (Sunday 31 December
// 2023), of a month (Wednesday 31 January 2024) and of a leap February
// (Thursday 29 February 2024): forward for a plan, an appointment, a
// present-tense statement or a change of schedule, backward for a report;
// a recurring expression is never pinned to a date, and a weekday nothing
// gives a direction to is left as said.
func TestResolveByTense(t *testing.T) {
	const (
		sun = "2023-12-31" // Sunday, the last day of a year
		wed = "2024-01-31" // Wednesday, the last day of a month
		thu = "2024-02-29" // Thursday, the last day of a leap February
		mid = "2024-05-08" // Wednesday
	)
	tests := []struct {
		tag, at, text string
		label         string // the first dated mention's label, "" for none
		every         string // the first recurring mention's label, "" for none
	}{
		{"en", sun, "My flight to Rome is on Tuesday.", "2 January 2024", ""},
		{"en", sun, "I saw him on Tuesday.", "26 December 2023", ""},
		{"en", sun, "This Tuesday I'm going to call her.", "2 January 2024", ""},
		{"en", sun, "I'm so excited about Friday!", "5 January 2024", ""},
		{"en", sun, "I'll see you tomorrow.", "1 January 2024", ""},
		{"en", sun, "Next month we start the renovation.", "January 2024", ""},
		{"en", sun, "I swim every Friday.", "", "every Friday"},
		{"en", sun, "On Sundays we cook together.", "", "every Sunday"},
		{"en", sun, "Tuesday!", "", ""},
		{"en", sun, "What did I do on Friday?", "29 December 2023", ""},
		{"en", sun, "What am I doing on Friday?", "5 January 2024", ""},
		{"en", sun, "We went to the Easter Sunday mass.", "", ""},
		// A capitalised word right before a weekday may be a name ending in
		// it ("Black Friday"): left as said; with "on" it is a date.
		{"en", sun, "I fly to Rome Friday, I will call you.", "", ""},
		{"en", sun, "I fly to Rome on Friday, I will call you.", "5 January 2024", ""},
		{"en", sun, "I'm planning a party on January 5th.", "5 January 2024", ""},
		{"en", sun, "We met on December 28th.", "28 December 2023", ""},
		{"en", sun, "I bike to my dance classes on Saturday afternoons.", "", "every Saturday"},
		{"en", wed, "I'm flying to Oslo on Friday.", "2 February 2024", ""},
		{"en", wed, "We went hiking on Monday.", "29 January 2024", ""},
		{"en", thu, "My doctor's appointment was moved to Thursday.", "7 March 2024", ""},
		{"en", thu, "The lease starts Friday.", "1 March 2024", ""},
		{"en", thu, "I moved to Berlin on Monday.", "26 February 2024", ""},
		{"de", sun, "Ich habe am Dienstag einen Arzttermin.", "2 January 2024", ""},
		{"de", sun, "Am Dienstag habe ich meine Mutter besucht.", "26 December 2023", ""},
		{"de", sun, "Jeden Samstag gehe ich laufen.", "", "every Saturday"},
		{"de", sun, "Samstags spiele ich Tennis.", "", "every Saturday"},
		{"de", wed, "Am Freitag fliegen wir nach Wien.", "2 February 2024", ""},
		{"de", wed, "Nächsten Monat ziehen wir um.", "February 2024", ""},
		{"de", thu, "Der Termin wurde auf Donnerstag verschoben.", "7 March 2024", ""},
		{"es", mid, "Tengo una entrevista de trabajo en Valencia el viernes.", "10 May 2024", ""},
		{"es", sun, "El martes vi a mi hermana.", "26 December 2023", ""},
		{"es", sun, "Voy a llamarla el martes.", "2 January 2024", ""},
		{"es", sun, "Todos los domingos como con mis padres.", "", "every Sunday"},
		{"es", sun, "Cada viernes salimos a cenar.", "", "every Friday"},
		{"es", wed, "El mes que viene empiezo en la empresa.", "February 2024", ""},
		{"es", thu, "La cita se cambió al jueves.", "7 March 2024", ""},
		{"fr", sun, "J'ai un rendez-vous mardi.", "2 January 2024", ""},
		{"fr", sun, "Mardi, j'ai vu Paul.", "26 December 2023", ""},
		{"fr", sun, "Tous les lundis je vais à la piscine.", "", "every Monday"},
		{"fr", sun, "Chaque vendredi nous dînons ensemble.", "", "every Friday"},
		{"fr", wed, "Je vais partir vendredi.", "2 February 2024", ""},
		{"fr", thu, "Le rendez-vous est reporté à jeudi.", "7 March 2024", ""},
		{"zh", sun, "我周二要去看医生。", "2 January 2024", ""},
		{"zh", sun, "我周二去了医院。", "26 December 2023", ""},
		{"zh", sun, "下个月我们搬家。", "January 2024", ""},
		{"zh", sun, "我每周六都去游泳。", "", "every Saturday"},
		{"zh", sun, "周二！", "", ""},
		{"zh", thu, "瑜伽课改到每周五了。", "", "every Friday"},
		{"zh", thu, "医生的预约改到周四了。", "7 March 2024", ""},
	}
	for _, tt := range tests {
		t.Run(tt.tag+"/"+tt.text, func(t *testing.T) {
			at, _ := time.Parse(time.DateOnly, tt.at)
			at = at.Add(10 * time.Hour)
			dated, recurring := lang.ScanLang(tt.tag, tt.text, at)
			if got := firstLabel(dated); got != tt.label {
				t.Errorf("said %s: date %q, want %q (all %v)", tt.at, got, tt.label, dated)
			}
			if got := firstLabel(recurring); got != tt.every {
				t.Errorf("said %s: recurring %q, want %q", tt.at, got, tt.every)
			}
			for _, m := range recurring {
				if !m.From.IsZero() || !m.To.IsZero() || tt.text[m.Start:m.End] != m.Text {
					t.Errorf("recurring %q pinned to %v..%v or misplaced", m.Text, m.From, m.To)
				}
			}
			if lang.Annotate(tt.text, recurring) != tt.text {
				t.Errorf("Annotate wrote a recurring expression's date into %q", tt.text)
			}
			if got := lang.ResolveLang(tt.tag, tt.text, at); firstLabel(got) != tt.label {
				t.Errorf("ResolveLang = %v, want only the dated mentions", got)
			}
		})
	}
}

func firstLabel(ms []lang.Mention) string {
	if len(ms) == 0 {
		return ""
	}
	return ms[0].Label()
}

// TestRecurringNeverPinned: however the sentence around it reads, a
// weekday inside a recurring expression yields no date.
func TestRecurringNeverPinned(t *testing.T) {
	at := time.Date(2024, 2, 29, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		tag, text string
		wd        time.Weekday // the weekday that recurs
	}{
		{"en", "Starting next week, the class will be every Friday.", time.Friday},
		{"en", "Yesterday I went, as I do each Monday.", time.Monday},
		{"de", "Ab jetzt treffen wir uns jeden Freitag.", time.Friday},
		{"es", "Desde ayer voy todos los viernes.", time.Friday},
		{"fr", "Désormais je travaille tous les vendredis.", time.Friday},
		{"zh", "我们的课改成每个星期五了。", time.Friday},
	} {
		dated, recurring := lang.ScanLang(tt.tag, tt.text, at)
		if len(recurring) != 1 || recurring[0].Every != tt.wd.String() {
			t.Errorf("%s %q: recurring %v, want every %s", tt.tag, tt.text, recurring, tt.wd)
		}
		for _, m := range dated {
			if m.Unit == lang.Day && m.From.Weekday() == tt.wd {
				t.Errorf("%s %q: the recurring %s pinned to %s", tt.tag, tt.text, tt.wd, m.Label())
			}
		}
	}
}
