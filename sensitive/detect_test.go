package sensitive

import (
	"strings"
	"testing"
)

func TestChecks(t *testing.T) {
	for _, c := range []struct {
		name string
		ok   bool
		got  bool
	}{
		{"luhn visa", true, luhn("4111111111111111")},
		{"luhn off by one", false, luhn("4111111111111112")},
		{"network amex 15", true, network("378282246310005")},
		{"network visa 15", false, network("411111111111111")},
		{"network unknown prefix", false, network("7992739871300000")},
		{"iban de", true, mod97("370400440532013000DE89") == 1},
		{"iban altered", false, mod97("370400440532013001DE89") == 1},
		{"dni", true, validDNI("12345678Z")},
		{"dni wrong letter", false, validDNI("12345678A")},
		{"nie", true, validNIE()},
		{"chinese id", true, validChineseID("11010519491231002X")},
		{"chinese id bad check", false, validChineseID("110105194912310021")},
		{"chinese id bad date", false, validChineseID("110105194913310028")},
		{"nir", true, validNIR("1 84 12 76 451 089 46")},
		{"nir bad key", false, validNIR("1 84 12 76 451 089 47")},
		{"ssn", true, validSSN("123-45-6789")},
		{"ssn area 000", false, validSSN("000-45-6789")},
		{"ssn area 9xx", false, validSSN("912-45-6789")},
		{"grouping 4-4-4-4", true, cardGrouping("4111 1111 1111 1111")},
		{"grouping 3-3-3-3-4", false, cardGrouping("411 111 111 111 1111")},
		{"grouping mixed separators", false, cardGrouping("4111-1111 1111-1111")},
	} {
		if c.got != c.ok {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.ok)
		}
	}
}

func validNIE() bool { return validDNI("X1234567L") }

// Detect's findings lie inside the text, in order, never overlapping, and
// one overlapping another keeps the more specific: a private key block is
// one finding, not the tokens inside it.
func TestDetectShape(t *testing.T) {
	text := "-----BEGIN RSA PRIVATE KEY-----\napi_key=9f8e7d6c5b4a39281706f5e4d3c2b1a0 sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z\n" +
		"-----END RSA PRIVATE KEY----- then mail bob@example.com or postgres://u:pw12345@host/db, card 4111111111111111"
	fs := Detect(text)
	kinds := []Kind{PrivateKey, Email, ConnString, Card}
	if len(fs) != len(kinds) {
		t.Fatalf("findings %+v, want kinds %v", fs, kinds)
	}
	for i, f := range fs {
		if f.Kind != kinds[i] || f.Start < 0 || f.End > len(text) || f.Start >= f.End {
			t.Errorf("finding %d: %+v, want kind %s within the text", i, f, kinds[i])
		}
		if i > 0 && fs[i-1].End > f.Start {
			t.Errorf("findings %d and %d overlap: %+v %+v", i-1, i, fs[i-1], f)
		}
	}
}

func FuzzDetect(f *testing.F) {
	for _, s := range corpus {
		f.Add(s.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		prev := 0
		for _, g := range Detect(text) {
			if g.Start < prev || g.End > len(text) || g.Start >= g.End {
				t.Fatalf("finding %+v out of order or bounds in %q", g, text)
			}
			if strings.TrimSpace(text[g.Start:g.End]) == "" {
				t.Fatalf("empty finding %+v in %q", g, text)
			}
			prev = g.End
		}
	})
}
