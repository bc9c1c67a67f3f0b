package engram

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Secrets and personal data in what is written: the engine finds them at
// its write entry (package sensitive) and treats each finding as its
// tenant's policy says, before anything is stored, formed, indexed or
// embedded. A treated finding is replaced in the stored text by a typed
// placeholder, "[group:kind#n]" (e.g. "[secret:api_key#1]"): the group and
// kind of the finding and its number among the findings of that record
// (an episode, or a memory's value, abstraction and cues together),
// counted from 1 in the order they appear.

// Treatment is what a write does with a finding.
type Treatment string

// The treatments.
const (
	// TreatSeal stores the placeholder and encrypts the span into the
	// vault, as a vault memory naming the record it was taken from, so an
	// administrator with the vault can read the record losslessly.
	TreatSeal Treatment = "seal"
	// TreatRedact stores the placeholder only: the span is gone.
	TreatRedact Treatment = "redact"
	// TreatKeep stores the span as said.
	TreatKeep Treatment = "keep"
)

// The groups of finding kinds a policy treats alike.
const (
	GroupSecret  = "secret"  // api_key, private_key, password, connection_string
	GroupPayment = "payment" // card, iban
	GroupID      = "id"      // national_id: government ids
	GroupContact = "contact" // email, phone
)

// SensitiveGroups lists the groups in the order policies print them.
var SensitiveGroups = []string{GroupSecret, GroupPayment, GroupID, GroupContact}

// SensitivePolicy says what a write does with each group of findings. An
// empty field takes the value of the policy beneath it (Over): a tenant's
// setting over the server's default.
type SensitivePolicy struct {
	Secret  Treatment `json:"secret,omitempty"`
	Payment Treatment `json:"payment,omitempty"`
	ID      Treatment `json:"id,omitempty"`
	Contact Treatment `json:"contact,omitempty"`
}

// DefaultSensitivePolicy is the policy of a server that sets none: secrets,
// payment data and government ids sealed, emails and phone numbers kept
// (users give them to be remembered, and they are how an agent reaches
// someone; a deployment that must not keep them sets contact=redact).
func DefaultSensitivePolicy() SensitivePolicy {
	return SensitivePolicy{Secret: TreatSeal, Payment: TreatSeal, ID: TreatSeal, Contact: TreatKeep}
}

// Of returns the treatment of group, "" for an unknown group.
func (p SensitivePolicy) Of(group string) Treatment {
	switch group {
	case GroupSecret:
		return p.Secret
	case GroupPayment:
		return p.Payment
	case GroupID:
		return p.ID
	case GroupContact:
		return p.Contact
	}
	return ""
}

func (p *SensitivePolicy) field(group string) *Treatment {
	switch group {
	case GroupSecret:
		return &p.Secret
	case GroupPayment:
		return &p.Payment
	case GroupID:
		return &p.ID
	case GroupContact:
		return &p.Contact
	}
	return nil
}

// Over returns p with its empty fields taken from base.
func (p SensitivePolicy) Over(base SensitivePolicy) SensitivePolicy {
	for _, g := range SensitiveGroups {
		if f := p.field(g); *f == "" {
			*f = base.Of(g)
		}
	}
	return p
}

// IsZero reports whether p sets no group.
func (p SensitivePolicy) IsZero() bool { return p == SensitivePolicy{} }

// Validate returns an EINVALID error naming the first group whose
// treatment is neither empty nor one of seal, redact, keep.
func (p SensitivePolicy) Validate() error {
	for _, g := range SensitiveGroups {
		switch t := p.Of(g); t {
		case "", TreatSeal, TreatRedact, TreatKeep:
		default:
			return Errorf(EINVALID, "sensitive policy: %s %q is not one of seal, redact, keep", g, t)
		}
	}
	return nil
}

// String prints p as ParseSensitivePolicy reads it, the groups set only:
// "secret=seal,payment=seal,id=seal,contact=keep".
func (p SensitivePolicy) String() string {
	var parts []string
	for _, g := range SensitiveGroups {
		if t := p.Of(g); t != "" {
			parts = append(parts, g+"="+string(t))
		}
	}
	return strings.Join(parts, ",")
}

// ParseSensitivePolicy reads a policy: a comma-separated list of
// group=treatment ("secret=seal,contact=redact"; groups left out stay
// empty), or one treatment for every group ("redact"). It fails with
// EINVALID naming the group or the part it cannot read.
func ParseSensitivePolicy(s string) (SensitivePolicy, error) {
	var p SensitivePolicy
	s = strings.TrimSpace(s)
	if s == "" {
		return p, nil
	}
	if !strings.Contains(s, "=") {
		for _, g := range SensitiveGroups {
			*p.field(g) = Treatment(s)
		}
		return p, p.Validate()
	}
	for _, part := range strings.Split(s, ",") {
		g, t, ok := strings.Cut(strings.TrimSpace(part), "=")
		f := p.field(strings.TrimSpace(g))
		if !ok || f == nil {
			return p, Errorf(EINVALID, "sensitive policy: %q is not group=treatment with a group of %s", part, strings.Join(SensitiveGroups, ", "))
		}
		*f = Treatment(strings.TrimSpace(t))
	}
	return p, p.Validate()
}

// SensitiveCount says how many findings of one kind a write treated, and
// how. It never carries the values.
type SensitiveCount struct {
	Kind      string    `json:"kind"`      // e.g. api_key, card, email
	Treatment Treatment `json:"treatment"` // seal or redact, as done
	Count     int       `json:"count"`
	// Requested is the policy's treatment when it could not be done: seal
	// on a server without a vault key is done as redact.
	Requested Treatment `json:"requested,omitempty"`
}

// SummarizeSensitive prints counts as an audit detail ("sealed api_key x1;
// redacted email x2"), kinds in order, never a value.
func SummarizeSensitive(counts []SensitiveCount) string {
	cs := append([]SensitiveCount(nil), counts...)
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].Treatment != cs[j].Treatment {
			return cs[i].Treatment < cs[j].Treatment
		}
		return cs[i].Kind < cs[j].Kind
	})
	parts := make([]string, len(cs))
	for i, c := range cs {
		verb := "sealed"
		if c.Treatment == TreatRedact {
			verb = "redacted"
		}
		parts[i] = fmt.Sprintf("%s %s x%d", verb, c.Kind, c.Count)
		if c.Requested != "" && c.Requested != c.Treatment {
			parts[i] += fmt.Sprintf(" (%s asked, no vault key)", c.Requested)
		}
	}
	return strings.Join(parts, "; ")
}

// TenantPolicy is a tenant's sensitive policy: what its administrator set
// (empty fields take the server's default) and what writes apply.
type TenantPolicy struct {
	Org     string          `json:"org"`
	Project string          `json:"project"`
	Set     SensitivePolicy `json:"set"`
	Applied SensitivePolicy `json:"applied"`
}

// SensitivePolicies reads and sets the sensitive policy of a tenant (org
// and project; a namespace's other fields are ignored), and scans what the
// tenant stores. Only an administrator of the tenant may call it.
type SensitivePolicies interface {
	// SensitivePolicy returns tenant n's policy. EINVALID for a bad
	// namespace; the store's error when it cannot be read.
	SensitivePolicy(ctx context.Context, n Namespace) (*TenantPolicy, error)
	// SetSensitivePolicy replaces tenant n's setting with p (the zero
	// policy returns it to the server's default) and returns the policy
	// now applied. It applies to writes from then on; what is stored
	// stays (engram scan treats it). EINVALID naming the field for a bad
	// namespace or treatment.
	SetSensitivePolicy(ctx context.Context, n Namespace, p SensitivePolicy) (*TenantPolicy, error)
	// ScanSensitive reads the records of scope s (episodes with their
	// speakers, memories with their versions, and the string values of
	// their metadata) and reports the findings by user, kind and record,
	// never a value. A scope naming no user sweeps the whole tenant: the
	// records of no user and those of every user (its agent and session,
	// if any, narrowing each user's). With apply
	// it treats each finding the tenant's policy does not keep, as a
	// write would have. EINVALID for a bad scope; the store's, the
	// vault's or the embedder's error otherwise (records treated before
	// a failure stay treated).
	ScanSensitive(ctx context.Context, s Scope, apply bool) (*SensitiveScan, error)
}

// MetaSensitivePolicy returns the store-wide meta key under which tenant
// n's sensitive policy setting is kept (as SensitivePolicy.String prints
// it).
func MetaSensitivePolicy(n Namespace) string {
	return "sensitive_policy/" + n.Org + "/" + n.Project
}

// SensitiveScan is what a scan of a scope's stored records found: how many
// episodes and memories it read and, by kind, how many findings and in
// which records (ids, never values); with apply, what it treated as the
// tenant's policy says.
type SensitiveScan struct {
	Users    int              `json:"users,omitempty"` // a scope naming no user: the tenant's users swept
	Episodes int              `json:"episodes"`
	Memories int              `json:"memories"`
	Found    []SensitiveFound `json:"found"`
	Treated  []SensitiveCount `json:"treated,omitempty"`
}

// SensitiveFound counts the findings of one kind a scan found in one
// user's records and names the records holding them (episode and memory
// ids, which are unique per user); User is empty for records of no user.
type SensitiveFound struct {
	User    string   `json:"user,omitempty"`
	Kind    string   `json:"kind"`
	Count   int      `json:"count"`
	Records []string `json:"records"`
}
