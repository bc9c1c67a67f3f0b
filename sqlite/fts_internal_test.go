package sqlite

import "testing"

// The text transform and the query tokenisation are tested in the
// textsearch package; this is the FTS5 syntax built from them.
func TestMatchQuery(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"!!!", ""},
		{"budget meeting", `"budget" OR "meeting"`},
		{`"a" OR b* NEAR(`, `"b" OR "near"`},
		{"AND", `"and"`},
		{"東京都 budget", `"東京 京都" OR "budget"`},
		{"京", `"京"`},
	} {
		if got := matchQuery(c.in); got != c.want {
			t.Errorf("matchQuery(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
