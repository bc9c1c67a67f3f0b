package sensitive

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// cardRE matches 13 to 19 digits written together or in groups separated
// by single spaces or dashes, not inside a longer run of digits or word.
var cardRE = regexp.MustCompile(`(?:^|[^0-9A-Za-z.,/-])((?:\d[ -]?){12,18}\d)(?:$|[^0-9A-Za-z/-]|[.,](?:\D|$))`)

// cards finds card numbers: digits that pass the Luhn check, with the
// prefix and length of a card network, written as one run or in groups
// of 4 (or Amex's 4-6-5), and not all one digit.
func cards(text string) []Finding {
	var out []Finding
	for _, m := range cardRE.FindAllStringSubmatchIndex(text, -1) {
		raw := text[m[2]:m[3]]
		digits := onlyDigits(raw)
		if cardGrouping(raw) && network(digits) && luhn(digits) && !oneDigit(digits) {
			out = append(out, Finding{Kind: Card, Start: m[2], End: m[3]})
		}
	}
	return out
}

// cardGrouping accepts a number written as one run, or in groups of four
// (the last group shorter), or as Amex's 4-6-5, with one kind of separator.
func cardGrouping(raw string) bool {
	if !strings.ContainsAny(raw, " -") {
		return true
	}
	groups := strings.FieldsFunc(raw, func(r rune) bool { return r == ' ' || r == '-' })
	if strings.Contains(raw, " ") && strings.Contains(raw, "-") {
		return false
	}
	lens := make([]int, len(groups))
	for i, g := range groups {
		lens[i] = len(g)
	}
	if len(lens) == 3 && lens[0] == 4 && lens[1] == 6 && (lens[2] == 5 || lens[2] == 4) {
		return true
	}
	for i, l := range lens {
		if l != 4 && !(i == len(lens)-1 && l >= 1 && l <= 4) {
			return false
		}
	}
	return true
}

// network reports whether digits have the prefix and length of a card
// network: Visa, Mastercard, American Express, Discover, JCB, UnionPay,
// Diners Club, Maestro.
func network(d string) bool {
	n := len(d)
	p2, _ := strconv.Atoi(d[:2])
	p4, _ := strconv.Atoi(d[:4])
	switch {
	case d[0] == '4':
		return n == 13 || n == 16 || n == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return n == 16
	case p2 == 34 || p2 == 37:
		return n == 15
	case p2 == 36 || p2 == 38 || p2 == 30:
		return n == 14 || n == 16
	case strings.HasPrefix(d, "6011"), p2 == 65, p4 >= 6440 && p4 <= 6499, p2 == 62:
		return n >= 16 && n <= 19
	case p2 == 35:
		return n >= 16 && n <= 19
	case p2 == 50 || p2 >= 56 && p2 <= 58 || p2 == 67 || p2 == 63:
		return n >= 12 && n <= 19
	}
	return false
}

// luhn reports whether the digits pass the Luhn check.
func luhn(d string) bool {
	sum := 0
	for i := range len(d) {
		v := int(d[len(d)-1-i] - '0')
		if i%2 == 1 {
			if v *= 2; v > 9 {
				v -= 9
			}
		}
		sum += v
	}
	return sum%10 == 0
}

func oneDigit(d string) bool { return strings.Count(d, d[:1]) == len(d) }

func onlyDigits(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ibanRE matches a country code, two check digits and the account, with
// spaces allowed between groups.
var ibanRE = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b`)

// ibanLengths are the lengths of the IBANs of the countries of the SEPA
// area and a few others that use them.
var ibanLengths = map[string]int{
	"AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20,
	"ES": 24, "FI": 18, "FR": 27, "GB": 22, "GI": 23, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26,
	"IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28,
	"PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "VA": 22, "AE": 23, "BR": 29, "IL": 23,
	"SA": 24, "TR": 26, "UA": 29, "MA": 28, "TN": 24, "QA": 29, "KW": 30, "JO": 30, "LB": 28, "PK": 24,
}

// ibans finds IBANs whose length fits their country and whose mod-97
// checksum holds.
func ibans(text string) []Finding {
	var out []Finding
	for _, loc := range ibanRE.FindAllStringIndex(text, -1) {
		start, end := loc[0], loc[1]
		compact := strings.ReplaceAll(text[start:end], " ", "")
		want, ok := ibanLengths[compact[:2]]
		if !ok {
			continue
		}
		if len(compact) > want { // a word or number after the IBAN was taken in
			compact = compact[:want]
			end = start + spanOf(text[start:end], want)
		}
		if len(compact) == want && mod97(compact[4:]+compact[:4]) == 1 {
			out = append(out, Finding{Kind: IBAN, Start: start, End: end})
		}
	}
	return out
}

// spanOf returns how many bytes of s hold its first n characters that are
// not spaces.
func spanOf(s string, n int) int {
	for i, r := range s {
		if r != ' ' {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return len(s)
}

// mod97 computes the remainder of the number that s's characters spell
// (letters as 10 to 35) divided by 97.
func mod97(s string) int {
	r := 0
	for _, c := range s {
		switch {
		case c >= '0' && c <= '9':
			r = (r*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			r = (r*100 + int(c-'A'+10)) % 97
		default:
			return -1
		}
	}
	return r
}

// nationalIDs finds government ids: US social security numbers (with
// dashes, outside the ranges never issued), Spanish DNI and NIE (check
// letter), Chinese resident ids (ISO 7064 check and a real birth date),
// French social security numbers (NIR, key of 97), UK National Insurance
// numbers (fixed form).
func nationalIDs(text string) []Finding {
	var out []Finding
	for _, c := range idChecks {
		for _, m := range c.re.FindAllStringSubmatchIndex(text, -1) {
			if c.valid(text[m[2]:m[3]]) {
				out = append(out, Finding{Kind: NationalID, Start: m[2], End: m[3]})
			}
		}
	}
	return out
}

var idChecks = []struct {
	re    *regexp.Regexp
	valid func(string) bool
}{
	{regexp.MustCompile(`(?:^|[^\d-])(\d{3}-\d{2}-\d{4})(?:$|[^\d-])`), validSSN},
	{regexp.MustCompile(`\b(\d{8}-?[A-Z]|[XYZ]-?\d{7}-?[A-Z])\b`), validDNI},
	{regexp.MustCompile(`(?:^|\D)(\d{17}[\dXx])(?:$|\D)`), validChineseID},
	{regexp.MustCompile(`(?:^|\D)([12] ?\d{2} ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2})(?:$|\D)`), validNIR},
	{regexp.MustCompile(`\b([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D])\b`), validNINO},
}

func validSSN(s string) bool {
	area, group, serial := s[:3], s[4:6], s[7:]
	return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
}

func validDNI(s string) bool {
	s = strings.ReplaceAll(s, "-", "")
	num := s[:len(s)-1]
	switch num[0] {
	case 'X':
		num = "0" + num[1:]
	case 'Y':
		num = "1" + num[1:]
	case 'Z':
		num = "2" + num[1:]
	}
	n, err := strconv.Atoi(num)
	return err == nil && "TRWAGMYFPDXBNJZSQVHLCKE"[n%23] == s[len(s)-1]
}

func validChineseID(s string) bool {
	weights := []int{7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2}
	sum := 0
	for i, w := range weights {
		sum += int(s[i]-'0') * w
	}
	if "10X98765432"[sum%11] != strings.ToUpper(s[17:])[0] {
		return false
	}
	born, err := time.Parse("20060102", s[6:14])
	return err == nil && born.Year() >= 1900 && born.Before(time.Now())
}

func validNIR(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	body, key := s[:13], s[13:]
	body = strings.NewReplacer("2A", "19", "2B", "18").Replace(body)
	n, err := strconv.ParseInt(body, 10, 64)
	k, err2 := strconv.Atoi(key)
	return err == nil && err2 == nil && int(97-n%97) == k
}

func validNINO(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	switch s[:2] {
	case "BG", "GB", "KN", "NK", "NT", "TN", "ZZ":
		return false
	}
	return true
}

// emailRE matches an address: a local part, @, and a domain with a
// top-level label of letters.
var emailRE = regexp.MustCompile(`\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,24}\b`)

func emails(text string) []Finding { return spans(text, emailRE, Email, 0) }

// phoneRE matches an international number (+, country code, 7 to 14 more
// digits in groups), or a number introduced as a phone number in one of
// the five languages, or a Chinese mobile number.
var phoneRE = regexp.MustCompile(`(?:` +
	`(\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6})` +
	`|(?i:\b(?:phone|tel|telephone|mobile|cell|call me (?:at|on)|text me at|telefon|handy|rufnummer|teléfono|telefono|móvil|movil|celular|téléphone|telephone|portable|numéro)(?:\s*(?:number|nummer|número|numéro))?(?:\s*(?:is|ist|es|est|:|=)\s*(?:le |el |la )?|\s+))(\(?\d[\d ()./-]{5,18}\d)` +
	`|(?:电话|手机|联系方式)(?:号码)?(?:是|为|：|:)?\s*(\+?\d[\d -]{5,18}\d)` +
	`|(?:^|\D)(1[3-9]\d{9})(?:$|\D)` +
	`)`)

// phones finds phone numbers of 7 to 15 digits.
func phones(text string) []Finding {
	var out []Finding
	for _, m := range phoneRE.FindAllStringSubmatchIndex(text, -1) {
		for g := 1; g <= 4; g++ {
			start, end := m[2*g], m[2*g+1]
			if start < 0 {
				continue
			}
			end = trimEnd(text, start, end)
			n := len(onlyDigits(text[start:end]))
			if n >= 7 && n <= 15 {
				out = append(out, Finding{Kind: Phone, Start: start, End: end})
			}
		}
	}
	return out
}
