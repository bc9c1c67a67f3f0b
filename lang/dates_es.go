package lang

import (
	"regexp"
	"time"
)

var (
	esNumbers = map[string]int{"un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5,
		"seis": 6, "siete": 7, "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "un par de": 2,
		"unos": 3, "unas": 3, "unos pocos": 3, "unas pocas": 3, "varios": 3, "varias": 3, "algunos": 3, "algunas": 3}
	esUnits = map[string]string{"día": "day", "días": "day", "dia": "day", "dias": "day", "semana": "week",
		"semanas": "week", "fin de semana": "weekend", "fines de semana": "weekend", "mes": "month",
		"meses": "month", "año": "year", "años": "year"}
	esBefore = map[string]int{"próximo": 1, "próxima": 1, "proximo": 1, "proxima": 1, "pasado": -1, "pasada": -1}
	esAfter  = map[string]int{"pasado": -1, "pasada": -1, "anterior": -1, "próximo": 1, "próxima": 1,
		"proximo": 1, "proxima": 1, "que viene": 1, "entrante": 1}
	esThis     = map[string]int{"este": 0, "esta": 0}
	esWeekdays = map[string]time.Weekday{"lunes": time.Monday, "martes": time.Tuesday, "miércoles": time.Wednesday,
		"miercoles": time.Wednesday, "jueves": time.Thursday, "viernes": time.Friday, "sábado": time.Saturday,
		"sabado": time.Saturday, "domingo": time.Sunday}
	esMonths = map[string]time.Month{"enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6,
		"julio": 7, "agosto": 8, "septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12}
)

func init() { rulesets[Spanish] = &ruleset{rules: esRules(), tense: esTense, recurring: esRecurring} }

func esRules() []rule {
	num, unit := numAlt(esNumbers), alt(esUnits)
	wd, mo := alt(esWeekdays), alt(esMonths)
	periods := `(semana|fin de semana|mes|año)`
	return []rule{
		lrule(`(?:anteayer|antier|antes de ayer)`, true, daysFrom(-2)),
		lrule(`pasado mañana`, true, daysFrom(2)),
		lrule(`ayer(?: (?:por la|en la|a la) (?:mañana|tarde|noche))?|anoche`, true, daysFrom(-1)),
		lrule(`hoy|esta (?:mañana|tarde|noche)`, true, daysFrom(0)),
		// "mañana" is tomorrow; "la mañana", "por la mañana" the morning.
		notAfter(regexp.MustCompile(`(?i)(la|esta|una|cada|pasado|buena|buenas)\s+$`),
			lrule(`mañana`, true, daysFrom(1))),
		lrule(`hace `+num+` `+unit, true, shifted(esNumbers, esUnits, 1, 2, -1)),
		lrule(`(?:en|dentro de) `+num+` `+unit, true, shifted(esNumbers, esUnits, 1, 2, 1)),
		lrule(`(?:(?:la|el|los) )?`+periods+` `+alt(esAfter), true, periodic(esAfter, esUnits, 2, 1)),
		lrule(`(?:(?:la|el) )?`+alt(esBefore)+` `+periods, true, periodic(esBefore, esUnits, 1, 2)),
		lrule(alt(esThis)+` `+periods, true, periodic(esThis, esUnits, 1, 2)),
		lrule(`(?:el )?`+wd+` `+alt(esAfter), true, weekdayOf(esAfter, esWeekdays, 2, 1)),
		lrule(`(?:el )?`+alt(esBefore)+` `+wd, true, weekdayOf(esBefore, esWeekdays, 1, 2)),
		lrule(alt(esThis)+` `+wd, true, weekdayOf(esThis, esWeekdays, 1, 2)),
		notAfter(regexp.MustCompile(`(?i)(cada|todos los|los|un|una)\s+$`),
			lrule(`(?:el )?`+wd, true, weekdayOf(nil, esWeekdays, 0, 1))),
		lrule(`(?:el )?(\d{1,2}) de `+mo+`(?: (?:de|del) (\d{4}))?`, false, dateOf(esMonths, 1, 2, 3)),
		lrule(`(?:(?:en|desde|hasta|de|a principios de|a finales de|a mediados de) )?`+mo+` (?:de |del )(\d{4})`, false, monthOf(esMonths, 1, 2)),
		lrule(`(?:en|desde|hasta|a principios de|a finales de|a mediados de) `+mo, false, monthOf(esMonths, 1, 0)),
		lrule(`(?:en|desde|hasta) (?:el (?:año )?)?((?:19|20)\d{2})`, false, yearOf(1)),
		isoDate,
	}
}
