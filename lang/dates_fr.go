package lang

import (
	"regexp"
	"time"
)

var (
	frNumbers = map[string]int{"un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6,
		"sept": 7, "huit": 8, "neuf": 9, "dix": 10, "onze": 11, "douze": 12, "quelques": 3, "plusieurs": 3}
	frUnits = map[string]string{"jour": "day", "jours": "day", "semaine": "week", "semaines": "week",
		"week-end": "weekend", "week-ends": "weekend", "weekend": "weekend", "weekends": "weekend",
		"mois": "month", "an": "year", "ans": "year", "année": "year", "années": "year"}
	frAfter = map[string]int{"dernier": -1, "dernière": -1, "passé": -1, "passée": -1, "précédent": -1,
		"précédente": -1, "prochain": 1, "prochaine": 1, "suivant": 1, "suivante": 1}
	frBefore   = map[string]int{"dernière": -1, "dernier": -1, "prochaine": 1, "prochain": 1}
	frThis     = map[string]int{"ce": 0, "cet": 0, "cette": 0}
	frWeekdays = map[string]time.Weekday{"lundi": time.Monday, "mardi": time.Tuesday, "mercredi": time.Wednesday,
		"jeudi": time.Thursday, "vendredi": time.Friday, "samedi": time.Saturday, "dimanche": time.Sunday}
	frMonths = map[string]time.Month{"janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "mai": 5,
		"juin": 6, "juillet": 7, "août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11,
		"décembre": 12, "decembre": 12}
)

func init() { rulesets[French] = &ruleset{rules: frRules(), tense: frTense, recurring: frRecurring} }

func frRules() []rule {
	num, unit := numAlt(frNumbers), alt(frUnits)
	wd, mo := alt(frWeekdays), alt(frMonths)
	periods := `(semaine|week-end|weekend|mois|année|an)`
	return []rule{
		lrule(`avant-hier|avant hier`, true, daysFrom(-2)),
		lrule(`après-demain|après demain`, true, daysFrom(2)),
		lrule(`hier(?: (?:matin|après-midi|soir))?`, true, daysFrom(-1)),
		lrule(`aujourd'hui|aujourd’hui|ce matin|cet après-midi|ce soir`, true, daysFrom(0)),
		lrule(`demain`, true, daysFrom(1)),
		lrule(`il y a `+num+` `+unit, true, shifted(frNumbers, frUnits, 1, 2, -1)),
		lrule(`dans `+num+` `+unit, true, shifted(frNumbers, frUnits, 1, 2, 1)),
		lrule(`(?:(?:la|le|l'|l’) ?)?`+periods+` `+alt(frAfter), true, periodic(frAfter, frUnits, 2, 1)),
		lrule(`(?:(?:la|le|l'|l’) ?)?`+alt(frBefore)+` `+periods, true, periodic(frBefore, frUnits, 1, 2)),
		lrule(alt(frThis)+` `+periods, true, periodic(frThis, frUnits, 1, 2)),
		lrule(`(?:le )?`+wd+` `+alt(frAfter), true, weekdayOf(frAfter, frWeekdays, 2, 1)),
		lrule(alt(frThis)+` `+wd, true, weekdayOf(frThis, frWeekdays, 1, 2)),
		// "le 3 mai 2023", "le 1er mai"
		lrule(`(?:le )?(\d{1,2}|1er) `+mo+`(?: (\d{4}))?`, false, dateOf(frMonths, 1, 2, 3)),
		notAfter(regexp.MustCompile(`(?i)(chaque|tous les|les|un)\s+$`),
			lrule(wd, true, weekdayOf(nil, frWeekdays, 0, 1))),
		lrule(`(?:(?:en|depuis|jusqu'en|début|fin|mi-|au mois de) ?)?`+mo+` (\d{4})`, false, monthOf(frMonths, 1, 2)),
		lrule(`(?:en|depuis|jusqu'en|début|fin|mi-|au mois de) ?`+mo, false, monthOf(frMonths, 1, 0)),
		lrule(`(?:en|depuis|jusqu'en) ((?:19|20)\d{2})`, false, yearOf(1)),
		isoDate,
	}
}
