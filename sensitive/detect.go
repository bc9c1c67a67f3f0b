// Package sensitive finds secrets and personal data in text without a
// model: credentials (API keys and tokens of the common providers, private
// keys, passwords stated as such, passwords in connection strings, other
// high-entropy credentials named as keys or tokens), payment data (card
// numbers that pass the Luhn check and belong to a card network, IBANs
// whose checksum holds), government ids that have a checksum or a fixed
// form, email addresses and phone numbers.
//
// Precision matters as much as recall: a finding is sealed or redacted,
// so an order number, a version string or a date taken for a card, a
// phone or an id would damage what the user said. Every detector
// therefore checks what can be checked (a checksum, a network's prefix and
// length, a date inside an id) or asks for the words that introduce the
// value, in English, German, Spanish, French and Chinese.
package sensitive

import (
	"sort"
)

// Kind is what a finding is.
type Kind string

// The kinds of finding.
const (
	APIKey     Kind = "api_key"           // a provider's key or token, or a credential named as one
	PrivateKey Kind = "private_key"       // a PEM private key block
	Password   Kind = "password"          // a password stated as such
	ConnString Kind = "connection_string" // the password of a URL with credentials
	Card       Kind = "card"              // a payment card number
	IBAN       Kind = "iban"              // an international bank account number
	NationalID Kind = "national_id"       // a government id with a checksum or a fixed form
	Email      Kind = "email"
	Phone      Kind = "phone"
)

// Class groups the kinds by what a deployment usually does with them.
type Class string

// The classes.
const (
	Secret   Class = "secret"   // credentials: sealed by default
	Payment  Class = "payment"  // card and bank numbers: sealed by default
	Personal Class = "personal" // ids, emails, phones
)

// ClassOf returns the class of k.
func ClassOf(k Kind) Class {
	switch k {
	case APIKey, PrivateKey, Password, ConnString:
		return Secret
	case Card, IBAN:
		return Payment
	}
	return Personal
}

// Finding is one span of text holding a secret or personal datum. Start
// and End are byte offsets into the text (End exclusive).
type Finding struct {
	Kind  Kind `json:"kind"`
	Start int  `json:"start"`
	End   int  `json:"end"`
}

// detector finds the spans of one or more kinds in a text.
type detector func(text string) []Finding

// detectors run in order of precedence: where two findings overlap, the
// one of the earlier detector is kept (a private key block over the
// tokens inside it, a connection string's password over an email-like
// tail).
var detectors = []detector{
	privateKeys, providerTokens, connStrings, statedPasswords, namedCredentials,
	cards, ibans, nationalIDs, emails, phones,
}

// Detect returns the findings in text, ordered by Start, none overlapping:
// where two overlap, the one of the earlier detector is kept, and of one
// detector the one that starts first.
func Detect(text string) []Finding {
	type ranked struct {
		Finding
		rank int
	}
	var all []ranked
	for rank, d := range detectors {
		for _, f := range d(text) {
			all = append(all, ranked{f, rank})
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].rank != all[j].rank {
			return all[i].rank < all[j].rank
		}
		return all[i].Start < all[j].Start
	})
	var kept []Finding
	for _, f := range all {
		if !overlaps(kept, f.Finding) {
			kept = append(kept, f.Finding)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].Start < kept[j].Start })
	return kept
}

func overlaps(fs []Finding, f Finding) bool {
	for _, g := range fs {
		if f.Start < g.End && g.Start < f.End {
			return true
		}
	}
	return false
}
