package lang_test

import (
	"testing"

	"github.com/engramhq/engram/lang"
)

// TestResolveLang resolves expressions of each language against ref, a
// Monday.
func TestResolveLang(t *testing.T) {
	tests := []struct {
		tag, text string
		want      string // the first mention's text
		from, to  string
		unit      lang.Unit
		relative  bool
	}{
		{"de", "Gestern war ich im Kino.", "Gestern", "2023-05-07", "2023-05-08", lang.Day, true},
		{"de", "Vorgestern hat es geregnet.", "Vorgestern", "2023-05-06", "2023-05-07", lang.Day, true},
		{"de", "Heute ist ein guter Tag.", "Heute", "2023-05-08", "2023-05-09", lang.Day, true},
		{"de", "Wir treffen uns morgen.", "morgen", "2023-05-09", "2023-05-10", lang.Day, true},
		{"de", "Heute Morgen war es kalt.", "Heute Morgen", "2023-05-08", "2023-05-09", lang.Day, true},
		{"de", "Ich war letzte Woche in Berlin.", "letzte Woche", "2023-05-01", "2023-05-08", lang.Week, true},
		{"de", "Letzten Monat habe ich gekündigt.", "Letzten Monat", "2023-04-01", "2023-05-01", lang.Month, true},
		{"de", "Letztes Jahr war schwer.", "Letztes Jahr", "2022-01-01", "2023-01-01", lang.Year, true},
		{"de", "Ich habe ihn vor zwei Wochen adoptiert.", "vor zwei Wochen", "2023-04-24", "2023-05-01", lang.Week, true},
		{"de", "Das war vor 3 Tagen.", "vor 3 Tagen", "2023-05-05", "2023-05-06", lang.Day, true},
		{"de", "Nächste Woche fliegen wir.", "Nächste Woche", "2023-05-15", "2023-05-22", lang.Week, true},
		{"de", "Am Freitag war ich müde.", "Am Freitag", "2023-05-05", "2023-05-06", lang.Day, true},
		{"de", "Am Freitag werde ich sie anrufen.", "Am Freitag", "2023-05-12", "2023-05-13", lang.Day, true},
		{"de", "Letzten Samstag bin ich gelaufen.", "Letzten Samstag", "2023-05-06", "2023-05-07", lang.Day, true},
		{"de", "Im Mai waren wir am Meer.", "Im Mai", "2023-05-01", "2023-06-01", lang.Month, false},
		{"de", "Das Konzert war am 3. Mai 2023.", "am 3. Mai 2023", "2023-05-03", "2023-05-04", lang.Day, false},
		{"de", "Geboren am 7.5.1990.", "7.5.1990", "1990-05-07", "1990-05-08", lang.Day, false},
		{"es", "Ayer fui al cine.", "Ayer", "2023-05-07", "2023-05-08", lang.Day, true},
		{"es", "Anteayer llovió mucho.", "Anteayer", "2023-05-06", "2023-05-07", lang.Day, true},
		{"es", "Nos vemos mañana.", "mañana", "2023-05-09", "2023-05-10", lang.Day, true},
		{"es", "La semana pasada estuve en Madrid.", "La semana pasada", "2023-05-01", "2023-05-08", lang.Week, true},
		{"es", "El mes pasado dejé mi trabajo.", "El mes pasado", "2023-04-01", "2023-05-01", lang.Month, true},
		{"es", "Lo adopté hace dos semanas.", "hace dos semanas", "2023-04-24", "2023-05-01", lang.Week, true},
		{"es", "Llegó hace 3 días.", "hace 3 días", "2023-05-05", "2023-05-06", lang.Day, true},
		{"es", "La próxima semana volamos.", "La próxima semana", "2023-05-15", "2023-05-22", lang.Week, true},
		{"es", "El sábado pasado corrí una carrera.", "El sábado pasado", "2023-05-06", "2023-05-07", lang.Day, true},
		{"es", "En mayo fuimos a la playa.", "En mayo", "2023-05-01", "2023-06-01", lang.Month, false},
		{"es", "El concierto fue el 3 de mayo de 2023.", "el 3 de mayo de 2023", "2023-05-03", "2023-05-04", lang.Day, false},
		{"fr", "Hier, j'ai vu un film.", "Hier", "2023-05-07", "2023-05-08", lang.Day, true},
		{"fr", "Avant-hier il a plu.", "Avant-hier", "2023-05-06", "2023-05-07", lang.Day, true},
		{"fr", "La semaine dernière j'étais à Paris.", "La semaine dernière", "2023-05-01", "2023-05-08", lang.Week, true},
		{"fr", "Le mois dernier j'ai démissionné.", "Le mois dernier", "2023-04-01", "2023-05-01", lang.Month, true},
		{"fr", "Je l'ai adopté il y a deux semaines.", "il y a deux semaines", "2023-04-24", "2023-05-01", lang.Week, true},
		{"fr", "La semaine prochaine nous partons.", "La semaine prochaine", "2023-05-15", "2023-05-22", lang.Week, true},
		{"fr", "Samedi dernier j'ai couru.", "Samedi dernier", "2023-05-06", "2023-05-07", lang.Day, true},
		{"fr", "En mai nous sommes allés à la plage.", "En mai", "2023-05-01", "2023-06-01", lang.Month, false},
		{"fr", "Le concert était le 3 mai 2023.", "le 3 mai 2023", "2023-05-03", "2023-05-04", lang.Day, false},
		{"zh", "我昨天去了公园。", "昨天", "2023-05-07", "2023-05-08", lang.Day, true},
		{"zh", "前天下雨了。", "前天", "2023-05-06", "2023-05-07", lang.Day, true},
		{"zh", "今天很忙。", "今天", "2023-05-08", "2023-05-09", lang.Day, true},
		{"zh", "我上周去了北京。", "上周", "2023-05-01", "2023-05-08", lang.Week, true},
		{"zh", "上个星期我很忙。", "上个星期", "2023-05-01", "2023-05-08", lang.Week, true},
		{"zh", "上个月我辞职了。", "上个月", "2023-04-01", "2023-05-01", lang.Month, true},
		{"zh", "我两周前领养了它。", "两周前", "2023-04-24", "2023-05-01", lang.Week, true},
		{"zh", "三天前下雨了。", "三天前", "2023-05-05", "2023-05-06", lang.Day, true},
		{"zh", "下周我们去旅行。", "下周", "2023-05-15", "2023-05-22", lang.Week, true},
		{"zh", "去年很难。", "去年", "2022-01-01", "2023-01-01", lang.Year, true},
		{"zh", "我上周六跑步了。", "上周六", "2023-05-06", "2023-05-07", lang.Day, true},
		{"zh", "5月我们去了海边。", "5月", "2023-05-01", "2023-06-01", lang.Month, false},
		{"zh", "音乐会是2023年5月3日。", "2023年5月3日", "2023-05-03", "2023-05-04", lang.Day, false},
		{"ja", "昨日、公園に行きました。", "昨日", "2023-05-07", "2023-05-08", lang.Day, true},
		{"ja", "先週、東京に行きました。", "先週", "2023-05-01", "2023-05-08", lang.Week, true},
		{"ja", "3日前に雨が降った。", "3日前", "2023-05-05", "2023-05-06", lang.Day, true},
		{"ja", "来月引っ越します。", "来月", "2023-06-01", "2023-07-01", lang.Month, true},
		{"ja", "先週の土曜日に走った。", "先週の土曜日", "2023-05-06", "2023-05-07", lang.Day, true},
		{"it", "We met in March 2021", "in March 2021", "2021-03-01", "2021-04-01", lang.Month, false}, // no rules of its own: English's
	}
	for _, tt := range tests {
		ms := lang.ResolveLang(tt.tag, tt.text, ref)
		if len(ms) == 0 {
			t.Errorf("ResolveLang(%s, %q): no mention, want %q", tt.tag, tt.text, tt.want)
			continue
		}
		m := ms[0]
		if m.Text != tt.want || m.From.Format("2006-01-02") != tt.from || m.To.Format("2006-01-02") != tt.to ||
			m.Unit != tt.unit || m.Relative != tt.relative {
			t.Errorf("ResolveLang(%s, %q) = %v relative=%v, want %q=%s[%s..%s) relative=%v",
				tt.tag, tt.text, m, m.Relative, tt.want, tt.unit, tt.from, tt.to, tt.relative)
		}
	}
}

func TestResolveLangNothing(t *testing.T) {
	for _, tt := range []struct{ tag, text string }{
		{"de", "Guten Morgen!"},
		{"de", "Jeden Samstag gehe ich laufen."},
		{"de", "Montags habe ich frei."},
		{"es", "Por la mañana tomo café."},
		{"es", "Los sábados juego al fútbol."},
		{"fr", "Chaque samedi je cours."},
		{"zh", "我喜欢公园。"},
	} {
		if ms := lang.ResolveLang(tt.tag, tt.text, ref); len(ms) > 0 {
			t.Errorf("ResolveLang(%s, %q) = %v, want nothing", tt.tag, tt.text, ms)
		}
	}
}
