package lang

import (
	"regexp"
	"strings"
	"time"
)

// A recurring expression names a time that comes back ("every Friday",
// "jeden Samstag", "todos los domingos", "tous les lundis", "每周五",
// "weekly"): it is found so that the weekday in it is never read as one
// day, and is reported with Mention.Every set and no period.

// recurRule is a rule whose match recurs; every names what recurs from
// the match's groups: a weekday ("Friday") or a unit ("day", "week").
func recurRule(re *regexp.Regexp, every func(g []string) string) rule {
	return rule{re: re, every: every, bound: true}
}

// everyOf returns the English name of what g[i] names, a weekday in wds or
// a unit in units, or "" when it is neither.
func everyOf(wds map[string]time.Weekday, units map[string]string, i int) func(g []string) string {
	return func(g []string) string {
		w := strings.ToLower(g[i])
		if wd, ok := wds[w]; ok {
			return wd.String()
		}
		if wd, ok := wds[strings.TrimSuffix(w, "s")]; ok {
			return wd.String()
		}
		return units[w]
	}
}

// recurUnits are the English names of the units a recurrence names.
var recurUnits = map[string]string{
	// English
	"day": "day", "days": "day", "daily": "day", "week": "week", "weeks": "week", "weekly": "week",
	"weekend": "weekend", "weekends": "weekend", "month": "month", "months": "month", "monthly": "month",
	"year": "year", "years": "year", "yearly": "year", "annually": "year", "morning": "morning", "mornings": "morning",
	"evening": "evening", "evenings": "evening", "night": "night", "nights": "night", "nightly": "night",
	// German
	"tag": "day", "täglich": "day", "woche": "week", "wöchentlich": "week", "wochenende": "weekend", "monat": "month",
	"monatlich": "month", "jahr": "year", "jährlich": "year", "abend": "evening", "morgen": "morning",
	// Spanish
	"día": "day", "días": "day", "dia": "day", "dias": "day", "semana": "week", "semanas": "week", "semanalmente": "week",
	"fin de semana": "weekend", "fines de semana": "weekend", "mes": "month", "meses": "month", "mensualmente": "month",
	"año": "year", "años": "year", "mañana": "morning", "mañanas": "morning", "noche": "night", "noches": "night",
	"a diario": "day", "diariamente": "day",
	// French
	"jour": "day", "jours": "day", "semaine": "week", "semaines": "week", "hebdomadaire": "week",
	"hebdomadairement": "week", "week-end": "weekend", "week-ends": "weekend", "mois": "month", "année": "year",
	"années": "year", "an": "year", "ans": "year", "matin": "morning", "matins": "morning", "soir": "evening",
	"soirs": "evening", "quotidiennement": "day",
}

// deAdverbs are the German weekdays as adverbs of habit: "samstags".
var deAdverbs = func() map[string]time.Weekday {
	out := map[string]time.Weekday{}
	for w, wd := range deWeekdays {
		out[w+"s"] = wd
	}
	return out
}()

// enRecurring is one pattern, since English text is most of what is
// scanned: "every (other) Friday|day|week…", "on Fridays", "on Friday
// afternoons", "weekly".
var enRecurring = []rule{
	recurRule(regexp.MustCompile(`(?i)\b(?:(?:every|each)(?: other| single)? (`+reWeekday[1:len(reWeekday)-1]+
		`|day|week|weekend|month|year|morning|evening|night)|(?:on )?(mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays)|`+
		`(?:on )?`+reWeekday+` (?:mornings|afternoons|evenings|nights)|(daily|weekly|monthly|yearly|annually|nightly))\b`),
		func(g []string) string {
			for i := 1; i < len(g); i++ {
				if g[i] != "" {
					return everyOf(weekdays, recurUnits, i)(g)
				}
			}
			return ""
		}),
}

var deRecurring = []rule{
	recurRule(regexp.MustCompile(`(?i)(?:jeden|jede|jedes)(?: zweiten?)? (`+alt(deWeekdays)[1:len(alt(deWeekdays))-1]+
		`|tag|woche|wochenende|monat|jahr|morgen|abend)`), everyOf(deWeekdays, recurUnits, 1)),
	recurRule(regexp.MustCompile(`(?i)(?:immer )?`+alt(deAdverbs)), everyOf(deAdverbs, nil, 1)),
	recurRule(regexp.MustCompile(`(?i)immer am `+alt(deWeekdays)), everyOf(deWeekdays, nil, 1)),
	recurRule(regexp.MustCompile(`(?i)(täglich|wöchentlich|monatlich|jährlich)`), everyOf(nil, recurUnits, 1)),
}

var esRecurring = []rule{
	recurRule(regexp.MustCompile(`(?i)cada (`+alt(esWeekdays)[1:len(alt(esWeekdays))-1]+
		`|día|dia|semana|fin de semana|mes|año|mañana|noche)`), everyOf(esWeekdays, recurUnits, 1)),
	recurRule(regexp.MustCompile(`(?i)(?:tod[oa]s )?l[oa]s (lunes|martes|miércoles|miercoles|jueves|viernes|sábados|sabados|domingos|`+
		`días|dias|semanas|fines de semana|meses|años|mañanas|noches)`), everyOf(esWeekdays, recurUnits, 1)),
	recurRule(regexp.MustCompile(`(?i)(semanalmente|mensualmente|diariamente|a diario)`), everyOf(nil, recurUnits, 1)),
}

var frRecurring = []rule{
	recurRule(regexp.MustCompile(`(?i)chaque (`+alt(frWeekdays)[1:len(alt(frWeekdays))-1]+
		`|jour|semaine|week-end|mois|année|an|matin|soir)`), everyOf(frWeekdays, recurUnits, 1)),
	recurRule(regexp.MustCompile(`(?i)(?:tous|toutes) les (lundis|mardis|mercredis|jeudis|vendredis|samedis|dimanches|`+
		`jours|semaines|week-ends|mois|ans|années|matins|soirs)`), everyOf(frWeekdays, recurUnits, 1)),
	recurRule(regexp.MustCompile(`(?i)(hebdomadaire(?:ment)?|quotidiennement)`), everyOf(nil, recurUnits, 1)),
}

// cjkEvery are what 每 and 毎 may recur.
var cjkEvery = map[string]string{"天": "day", "日": "day", "晚": "night", "周": "week", "週": "week", "星期": "week",
	"个星期": "week", "個星期": "week", "礼拜": "week", "禮拜": "week", "月": "month", "个月": "month", "個月": "month",
	"年": "year", "朝": "morning", "晩": "night", "週末": "weekend", "周末": "weekend"}

var cjkRecurring = []rule{
	{re: regexp.MustCompile(`每(?:个|個|逢)?(?:星期|礼拜|禮拜|周|週)([一二三四五六日天])`), every: func(g []string) string {
		return cjkWeekdays[g[1]].String()
	}},
	{re: regexp.MustCompile(`毎週([月火水木金土日])曜日?`), every: func(g []string) string { return cjkWeekdays[g[1]].String() }},
	{re: regexp.MustCompile(`[每毎](个星期|個星期|个月|個月|周末|週末|星期|礼拜|禮拜|天|日|晚|周|週|月|年|朝|晩)`), every: func(g []string) string {
		return cjkEvery[g[1]]
	}},
}
