package sensitive

import (
	"math"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// privateKeyRE matches a PEM private key block; an unterminated one runs to
// the end of the text, since a pasted key cut short is still a secret.
var privateKeyRE = regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\z)`)

func privateKeys(text string) []Finding { return spans(text, privateKeyRE, PrivateKey, 0) }

// providerTokenRE matches the keys and tokens whose form a provider fixes:
// OpenAI and Anthropic keys, AWS access key ids, GitHub, GitLab, Slack,
// Google, Stripe and Hugging Face tokens, JSON web tokens.
var providerTokenRE = regexp.MustCompile(`(?:` +
	`\bsk-ant-[A-Za-z0-9_-]{20,}` +
	`|\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}` +
	`|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b` +
	`|\bgh[pousr]_[A-Za-z0-9]{36,}\b|\bgithub_pat_[A-Za-z0-9_]{22,}` +
	`|\bglpat-[A-Za-z0-9_-]{20,}` +
	`|\bxox[abprs]-[A-Za-z0-9-]{10,}` +
	`|\bAIza[0-9A-Za-z_-]{35}\b` +
	`|\b[sr]k_(?:live|test)_[0-9A-Za-z]{16,}` +
	`|\bhf_[A-Za-z0-9]{30,}\b` +
	`|\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}` +
	`)`)

func providerTokens(text string) []Finding { return spans(text, providerTokenRE, APIKey, 0) }

// connStringRE matches a URL with a user and a password; group 1 is the
// password.
var connStringRE = regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@[^\s/]+`)

func connStrings(text string) []Finding { return spans(text, connStringRE, ConnString, 1) }

// passwordRE matches a password introduced as one: the word, an optional
// "is", a separator, then the value (group 1). In English, German,
// Spanish, French and Chinese.
var passwordRE = regexp.MustCompile(`(?i)(?:\b(?:password|passwort|kennwort|passcode|passwd|pwd|contraseña|mot de passe|mdp)|密码|口令)` +
	`(?:\s+(?:for|für|de|del|du|des|von|of)(?:\s+[^\s:=]{1,40}){1,3}?)?` +
	`(?:\s*(?:is|ist|lautet|es|est|was|war|era|était|:|=|：|是|为|為)\s*)+` +
	`["'“„«]?\s?([^\s"'”“«»，。；、]{4,64})`)

func statedPasswords(text string) []Finding {
	var out []Finding
	for _, m := range passwordRE.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2], trimClause(text, m[2], m[3])
		v := text[start:end]
		if end-start < 4 || isWordLike(v) && !hasDigitOrSymbol(v) && commonWord(v) {
			continue
		}
		out = append(out, Finding{Kind: Password, Start: start, End: end})
	}
	return out
}

// credentialRE matches a value named as a key, token or secret: the word,
// a separator or "is", then the value (group 1), which must also look like
// a credential (see credentialLike).
var credentialRE = regexp.MustCompile(`(?i)(?:\b(?:api[_ -]?key|access[_ -]?key|secret(?:[_ -]?key)?|token|bearer|auth[_ -]?key|schlüssel|clave|clé|cle)|密钥|令牌|秘钥)` +
	`(?:(?:\s+[^\s:=]{1,15}){0,2}\s*(?:is|ist|lautet|es|est|:|=|：|是|为)\s*|\s+)` +
	`["'“„«]?([A-Za-z0-9+/=_\-.]{16,200})`)

func namedCredentials(text string) []Finding {
	var out []Finding
	for _, m := range credentialRE.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2], trimEnd(text, m[2], m[3])
		if credentialLike(text[start:end]) {
			out = append(out, Finding{Kind: APIKey, Start: start, End: end})
		}
	}
	return out
}

// credentialLike reports whether v looks generated rather than written:
// letters and digits mixed, and at least 3.5 bits of entropy a character.
func credentialLike(v string) bool {
	var letters, digits int
	for _, r := range v {
		switch {
		case unicode.IsLetter(r):
			letters++
		case unicode.IsDigit(r):
			digits++
		}
	}
	return letters > 0 && digits > 0 && entropy(v) >= 3.5
}

// entropy is the Shannon entropy of v's characters, in bits a character.
func entropy(v string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range v {
		counts[r]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

// spans returns the spans of re's matches (of group g when g > 0) as
// findings of kind k, with trailing sentence punctuation left out.
func spans(text string, re *regexp.Regexp, k Kind, g int) []Finding {
	var out []Finding
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		start, end := m[2*g], m[2*g+1]
		if start < 0 {
			continue
		}
		if k != PrivateKey {
			end = trimEnd(text, start, end)
		}
		out = append(out, Finding{Kind: k, Start: start, End: end})
	}
	return out
}

// trimClause moves end back over a comma, semicolon or full stop that
// ends a clause, keeping other punctuation: it may belong to a password.
func trimClause(text string, start, end int) int {
	for end > start && strings.ContainsRune(".,;", rune(text[end-1])) {
		end--
	}
	return end
}

// trimEnd moves end back over the punctuation that ends a sentence or a
// clause, which is more likely the writer's than the value's.
func trimEnd(text string, start, end int) int {
	for end > start {
		r, n := utf8.DecodeLastRuneInString(text[start:end])
		if !strings.ContainsRune(".,;:!?)]}>。，；！？）", r) {
			break
		}
		end -= n
	}
	return end
}

func isWordLike(v string) bool {
	for _, r := range v {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

func hasDigitOrSymbol(v string) bool {
	for _, r := range v {
		if !unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// commonWord reports whether v is a word that follows "password is" in a
// sentence about a password rather than giving one ("my password is
// wrong", "das Passwort ist falsch", "la contraseña es incorrecta").
func commonWord(v string) bool {
	return notPasswords[strings.ToLower(v)]
}

var notPasswords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`wrong incorrect correct invalid expired weak strong long short required
		needed missing empty saved stored changed reset forgotten different same secure insecure too
		the this that what which mine yours here there below above attached same still also
		falsch richtig ungültig abgelaufen schwach stark lang kurz erforderlich gespeichert geändert
		vergessen anders sicher unsicher noch auch hier dort unten oben zu das der die mein dein
		incorrecta correcta inválida caducada débil fuerte larga corta necesaria guardada cambiada
		olvidada diferente segura insegura todavía también aquí allí abajo arriba demasiado la el mi tu
		incorrect correcte invalide expiré faible fort longue courte nécessaire enregistré changé
		oublié différent sécurisé encore aussi ici là dessous dessus trop le mon ton votre`) {
		notPasswords[w] = true
	}
}
