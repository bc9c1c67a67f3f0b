package postgres

import "testing"

func TestTSQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"!!! ???", ""},
		{"budget meeting", `"budget" or "meeting"`},
		{`"a" OR b* NEAR(`, `"b" or "near"`},
		{"or OR Or", `"or"`}, // only stop words: searched, and quoted, so never an operator
		{"-budget +x", `"budget" or "x"`},
		{"東京都 budget", `"東京 京都" or "budget"`},
		{"京", `"京"`},
		{`'); DROP TABLE memories; --`, `"drop" or "table" or "memories"`},
	} {
		if got := tsQuery(c.in); got != c.want {
			t.Errorf("tsQuery(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestJSONHasNUL(t *testing.T) {
	for in, want := range map[string]bool{
		`{"k":"v"}`:          false,
		`{"k":"a\u0000b"}`:   true,
		`{"k":"a\\u0000b"}`:  false, // an escaped backslash, then text
		`{"k":"a\\\u0000b"}`: true,
		`{"\u0000":1}`:       true,
		`u0000`:              false,
	} {
		if got := jsonHasNUL([]byte(in)); got != want {
			t.Errorf("jsonHasNUL(%s) = %v, want %v", in, got, want)
		}
	}
}
