package lang_test

import (
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/lang"
)

// ref is a Monday afternoon.
var ref = time.Date(2023, 5, 8, 13, 56, 0, 0, time.UTC)

func TestResolve(t *testing.T) {
	tests := []struct {
		text       string
		want       string // the first mention's text
		from, to   string // its period, dates
		unit       lang.Unit
		label      string
		isRelative bool
	}{
		{"I went to a support group yesterday and it was great.", "yesterday", "2023-05-07", "2023-05-08", lang.Day, "7 May 2023", true},
		{"Last night we watched a movie.", "Last night", "2023-05-07", "2023-05-08", lang.Day, "7 May 2023", true},
		{"I'm so tired today", "today", "2023-05-08", "2023-05-09", lang.Day, "8 May 2023", true},
		{"We leave tomorrow!", "tomorrow", "2023-05-09", "2023-05-10", lang.Day, "9 May 2023", true},
		{"It happened the day before yesterday.", "the day before yesterday", "2023-05-06", "2023-05-07", lang.Day, "6 May 2023", true},
		{"I ran a charity race last Saturday.", "last Saturday", "2023-05-06", "2023-05-07", lang.Day, "6 May 2023", true},
		{"Last Monday was rough.", "Last Monday", "2023-05-01", "2023-05-02", lang.Day, "1 May 2023", true},
		{"See you next Friday", "next Friday", "2023-05-12", "2023-05-13", lang.Day, "12 May 2023", true},
		{"I painted it on Friday.", "on Friday", "2023-05-05", "2023-05-06", lang.Day, "5 May 2023", true},
		{"I will call her on Friday.", "on Friday", "2023-05-12", "2023-05-13", lang.Day, "12 May 2023", true},
		{"I adopted him two weeks ago.", "two weeks ago", "2023-04-24", "2023-05-01", lang.Week, "the week of 24 April 2023", true},
		{"That was 3 days ago", "3 days ago", "2023-05-05", "2023-05-06", lang.Day, "5 May 2023", true},
		{"a few days ago I met her", "a few days ago", "2023-05-05", "2023-05-06", lang.Day, "5 May 2023", true},
		{"We moved here four years ago.", "four years ago", "2019-01-01", "2020-01-01", lang.Year, "2019", true},
		{"I started a month ago", "a month ago", "2023-04-01", "2023-05-01", lang.Month, "April 2023", true},
		{"I gave a talk last week.", "last week", "2023-05-01", "2023-05-08", lang.Week, "the week of 1 May 2023", true},
		{"We went camping last weekend.", "last weekend", "2023-05-06", "2023-05-08", lang.Weekend, "the weekend of 6 May 2023", true},
		{"I'm going camping next month.", "next month", "2023-06-01", "2023-07-01", lang.Month, "June 2023", true},
		{"Last year was hard.", "Last year", "2022-01-01", "2023-01-01", lang.Year, "2022", true},
		{"We went to the beach last summer.", "last summer", "2022-06-01", "2022-09-01", lang.Season, "summer 2022", true},
		{"in two weeks we fly", "in two weeks", "2023-05-22", "2023-05-29", lang.Week, "the week of 22 May 2023", true},
		{"Earlier this month I quit.", "Earlier this month", "2023-05-01", "2023-06-01", lang.Month, "May 2023", true},
		{"The show is on 7 May 2023.", "7 May 2023", "2023-05-07", "2023-05-08", lang.Day, "7 May 2023", false},
		{"Born on May 7, 1990.", "May 7, 1990", "1990-05-07", "1990-05-08", lang.Day, "7 May 1990", false},
		{"The meetup will be on the 20th of June", "20th of June", "2023-06-20", "2023-06-21", lang.Day, "20 June 2023", false},
		{"We met on the 20th of June", "20th of June", "2022-06-20", "2022-06-21", lang.Day, "20 June 2022", false},
		{"We met in March 2021", "in March 2021", "2021-03-01", "2021-04-01", lang.Month, "March 2021", false},
		{"It opened in June.", "in June", "2022-06-01", "2022-07-01", lang.Month, "June 2022", false},
		{"It opens in June, I will go.", "in June", "2023-06-01", "2023-07-01", lang.Month, "June 2023", false},
		{"That was back in 2019.", "in 2019", "2019-01-01", "2020-01-01", lang.Year, "2019", false},
		{"We met in the summer of 2021.", "the summer of 2021", "2021-06-01", "2021-09-01", lang.Season, "summer 2021", false},
		{"I've had them for 3 years now!", "for 3 years now", "2020-01-01", "2021-01-01", lang.Year, "2020", true},
		{"I visited it in a week ago.", "in a week ago", "2023-05-01", "2023-05-08", lang.Week, "the week of 1 May 2023", true},
		{"I baked twice in the past two weeks.", "in the past two weeks", "2023-04-24", "2023-05-09", lang.Span, "24 April 2023 to 8 May 2023", true},
		{"Over the last 3 days it rained.", "Over the last 3 days", "2023-05-05", "2023-05-09", lang.Span, "5 May 2023 to 8 May 2023", true},
		{"the past few months were busy", "the past few months", "2023-02-08", "2023-05-09", lang.Span, "8 February 2023 to 8 May 2023", true},
		{"logged 2023-04-30 at noon", "2023-04-30", "2023-04-30", "2023-05-01", lang.Day, "30 April 2023", false},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			ms := lang.Resolve(tt.text, ref)
			if len(ms) == 0 {
				t.Fatalf("Resolve(%q) found nothing", tt.text)
			}
			m := ms[0]
			if got := m.Text; got != tt.want {
				t.Errorf("text = %q, want %q (all: %v)", got, tt.want, ms)
			}
			if got, want := tt.text[m.Start:m.End], m.Text; got != want {
				t.Errorf("offsets give %q, not %q", got, want)
			}
			if got := m.From.Format(time.DateOnly); got != tt.from {
				t.Errorf("from = %s, want %s", got, tt.from)
			}
			if got := m.To.Format(time.DateOnly); got != tt.to {
				t.Errorf("to = %s, want %s", got, tt.to)
			}
			if m.Unit != tt.unit {
				t.Errorf("unit = %s, want %s", m.Unit, tt.unit)
			}
			if got := m.Label(); got != tt.label {
				t.Errorf("label = %q, want %q", got, tt.label)
			}
			if m.Relative != tt.isRelative {
				t.Errorf("relative = %v, want %v", m.Relative, tt.isRelative)
			}
		})
	}
}

func TestResolveNothing(t *testing.T) {
	for _, text := range []string{
		"",
		"I may go, who knows.",
		"We have 2000 photos.",
		"Sundays are for rest.",
		"What was the rotation on a Sunday?",
		"I swim every Monday morning.",
		"Any Friday works for me.",
		"我昨天去了东京。",
		"He said it was a day before the wedding.",
	} {
		if ms := lang.Resolve(text, ref); len(ms) != 0 {
			t.Errorf("Resolve(%q) = %v, want nothing", text, ms)
		}
	}
}

func TestResolveSeveral(t *testing.T) {
	text := "Yesterday I booked the trip for next Friday, two weeks after my birthday in May 2023."
	ms := lang.Resolve(text, ref)
	var got []string
	for _, m := range ms {
		got = append(got, m.Label())
	}
	if want := "7 May 2023|12 May 2023|May 2023"; strings.Join(got, "|") != want {
		t.Errorf("labels = %q, want %q", strings.Join(got, "|"), want)
	}
}

func TestResolveSeasonsAroundTheYear(t *testing.T) {
	tests := []struct {
		at, text, label string
	}{
		{"2023-10-15", "last summer", "summer 2023"},
		{"2023-07-15", "last summer", "summer 2022"},
		{"2023-07-15", "next summer", "summer 2024"},
		{"2023-02-10", "this winter", "winter 2022"},
		{"2023-02-10", "next winter", "winter 2023"},
		{"2023-02-10", "last winter", "winter 2021"},
	}
	for _, tt := range tests {
		at, _ := time.Parse(time.DateOnly, tt.at)
		ms := lang.Resolve(tt.text, at)
		if len(ms) != 1 {
			t.Fatalf("Resolve(%q at %s) = %v", tt.text, tt.at, ms)
		}
		if got := ms[0].Label(); got != tt.label {
			t.Errorf("Resolve(%q at %s) = %q, want %q", tt.text, tt.at, got, tt.label)
		}
	}
}

func TestAnnotate(t *testing.T) {
	text := "I went yesterday, and on 7 May 2023 too."
	got := lang.Annotate(text, lang.Resolve(text, ref))
	if want := "I went yesterday [7 May 2023], and on 7 May 2023 too."; got != want {
		t.Errorf("Annotate = %q, want %q", got, want)
	}
	if got := lang.Annotate("no dates", nil); got != "no dates" {
		t.Errorf("Annotate without mentions = %q", got)
	}
}
