package lang

import (
	"strconv"
	"strings"
	"time"
)

// Chinese and Japanese share one rule set: their calendars write dates the
// same way ("2023年5月3日"), and a word of one rarely means something else
// in the other.

func init() {
	rs := &ruleset{rules: cjkRules(), tense: cjkTense, recurring: cjkRecurring}
	rulesets[Chinese] = rs
	rulesets[Japanese] = rs
}

// cjkNumber reads a count written in digits (also full-width) or in Chinese
// numerals up to 99 ("三", "十二", "两", "几" for a few).
func cjkNumber(s string) (int, bool) {
	s = strings.Map(func(r rune) rune {
		if r >= '０' && r <= '９' {
			return r - '０' + '0'
		}
		return r
	}, s)
	if n, err := strconv.Atoi(s); err == nil {
		return n, n > 0 && n < 1000
	}
	digit := map[rune]int{'一': 1, '二': 2, '两': 2, '兩': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7,
		'八': 8, '九': 9, '几': 3, '幾': 3, '数': 3, '數': 3}
	n, cur := 0, 0
	for _, r := range s {
		switch {
		case r == '十':
			if cur == 0 {
				cur = 1
			}
			n += cur * 10
			cur = 0
		default:
			d, ok := digit[r]
			if !ok {
				return 0, false
			}
			cur = d
		}
	}
	n += cur
	return n, n > 0
}

var cjkUnits = map[string]string{"天": "day", "日": "day", "周": "week", "週": "week", "星期": "week",
	"礼拜": "week", "禮拜": "week", "週間": "week", "个星期": "week", "個星期": "week", "个礼拜": "week",
	"月": "month", "个月": "month", "個月": "month", "ヶ月": "month", "か月": "month", "カ月": "month",
	"ケ月": "month", "年": "year"}

// cjkDirs are the prefixes that place a period relative to now: 上 last,
// 这/本/今 this, 下/来 next; 先 last in Japanese.
var cjkDirs = map[string]int{"上": -1, "上个": -1, "上個": -1, "这": 0, "这个": 0, "這": 0, "這個": 0,
	"本": 0, "下": 1, "下个": 1, "下個": 1, "先": -1, "今": 0, "来": 1, "來": 1}

var cjkWeekdays = map[string]time.Weekday{"一": time.Monday, "二": time.Tuesday, "三": time.Wednesday,
	"四": time.Thursday, "五": time.Friday, "六": time.Saturday, "日": time.Sunday, "天": time.Sunday,
	"月": time.Monday, "火": time.Tuesday, "水": time.Wednesday, "木": time.Thursday, "金": time.Friday,
	"土": time.Saturday}

func cjkRules() []rule {
	num := `([0-9０-９]{1,3}|[一二两兩三四五六七八九十几幾数數]{1,3})`
	ago := func(sign int) resolver {
		return func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
			n, ok := cjkNumber(g[1])
			if !ok {
				return time.Time{}, "", false
			}
			return shiftN(ref, sign*n, cjkUnits[g[2]])
		}
	}
	// weekIn resolves a weekday of the week a prefix names: 上周六 is the
	// Saturday of last week, 下周一 the Monday of next week.
	weekIn := func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
		wd := cjkWeekdays[g[2]]
		if g[1] == "" {
			return weekdayOf(nil, cjkWeekdays, 0, 2)(g, ref, tt)
		}
		n := cjkDirs[strings.TrimSuffix(g[1], "の")]
		return weekStart(ref).AddDate(0, 0, 7*n+(int(wd)+6)%7), Day, true
	}
	return []rule{
		crule(`前天|一昨日|おととい`, true, daysFrom(-2)),
		crule(`后天|後天|明後日|あさって`, true, daysFrom(2)),
		crule(`昨天|昨日|昨晚|昨夜|きのう`, true, daysFrom(-1)),
		crule(`今天|今日|今晚|今夜|今朝|きょう`, true, daysFrom(0)),
		crule(`明天|明日|あした`, true, daysFrom(1)),
		crule(num+`(个星期|個星期|个礼拜|个月|個月|ヶ月|か月|カ月|ケ月|週間|星期|礼拜|禮拜|天|日|周|週|月|年)(?:之前|以前|前)`, true, ago(-1)),
		crule(num+`(个星期|個星期|个礼拜|个月|個月|ヶ月|か月|カ月|ケ月|週間|星期|礼拜|禮拜|天|日|周|週|月|年)(?:之后|以后|之後|以後|后|後)`, true, ago(1)),
		crule(`(上个|上個|这个|這個|下个|下個|上|这|這|本|下)(星期|礼拜|禮拜|周|週|月)`, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
			u := "week"
			if g[2] == "月" {
				u = "month"
			}
			return period(ref, u, cjkDirs[g[1]])
		}),
		crule(`(先|今|来|來)(週|月)`, true, func(g []string, ref time.Time, _ tense) (time.Time, Unit, bool) {
			u := "week"
			if g[2] == "月" {
				u = "month"
			}
			return period(ref, u, cjkDirs[g[1]])
		}),
		crule(`去年|昨年`, true, yearsFrom(-1)),
		crule(`今年`, true, yearsFrom(0)),
		crule(`明年|来年|來年`, true, yearsFrom(1)),
		crule(`(上个|上個|这个|這個|下个|下個|上|这|這|本|下)?(?:星期|礼拜|禮拜|周|週)([一二三四五六日天])`, true, weekIn),
		crule(`(先週の?|今週の?|来週の?)?([月火水木金土日])曜日?`, true, func(g []string, ref time.Time, tt tense) (time.Time, Unit, bool) {
			if g[1] != "" {
				g = []string{g[0], strings.TrimSuffix(strings.TrimSuffix(g[1], "の"), "週"), g[2]}
			}
			return weekIn(g, ref, tt)
		}),
		crule(`((?:19|20)\d{2})年(\d{1,2})月(\d{1,2})[日号號]`, false, dateOf(numericMonths, 3, 2, 1)),
		crule(`((?:19|20)\d{2})年(\d{1,2})月`, false, monthOf(numericMonths, 2, 1)),
		crule(`(\d{1,2})月(\d{1,2})[日号號]`, false, dateOf(numericMonths, 2, 1, 0)),
		crule(`(\d{1,2})月(?:份)?`, false, monthOf(numericMonths, 1, 0)),
		crule(`((?:19|20)\d{2})年`, false, yearOf(1)),
		isoDate,
	}
}
