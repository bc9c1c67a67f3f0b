package engram

import "time"

// Metadata keys of the contract between formation and retrieval: a former
// writes them and the search pipeline reads them, always through the
// accessors below, so that a key spelled differently on one side is a
// compile error rather than a silently lost boost.
const (
	// MetaRole is the role of the party who said what the memory was
	// formed from ("user", "assistant").
	MetaRole = "role"
	// MetaSpeaker is that party's name, when it has one.
	MetaSpeaker = "speaker"
	// MetaEventFrom and MetaEventTo hold the period the memory's text says
	// it happened in, as dates (2006-01-02): [from, to). Absent when the
	// text names no time.
	MetaEventFrom = "event_from"
	MetaEventTo   = "event_to"
	// MetaPrev and MetaNext hold the ids of the memories formed from the
	// episodes before and after this one in the same conversation.
	MetaPrev = "prev"
	MetaNext = "next"
	// MetaConversation is the id of the conversation a memory was formed
	// in, when the former knows one (a run of turns without a long pause).
	MetaConversation = "conversation"
	// MetaGranularity says what a memory spans: GranularityScene for a
	// run of turns; absent for one turn.
	MetaGranularity  = "granularity"
	GranularityScene = "scene"
	// MetaFactSubject, MetaFactAttribute and MetaFactValue describe a fact
	// memory: whom it is about, which attribute ("residence", "favourite
	// food") and its value. A newer fact of the same subject and attribute
	// supersedes it.
	MetaFactSubject   = "fact_subject"
	MetaFactAttribute = "fact_attribute"
	MetaFactValue     = "fact_value"
	// MetaFactTerms lists the words of a question about a fact's attribute
	// in every language the rules read ("live", "wohnt", "vive"), so a
	// question meets a fact said in another language.
	MetaFactTerms = "fact_terms"
	// MetaStaleTerms lists words of a question about a fact that this
	// memory states and a newer memory replaced ("live", "wohnt"):
	// retrieval ranks the memory lower for a query with one of them.
	MetaStaleTerms = "stale_terms"
	// MetaStaleSince maps each stale term to the event time (RFC 3339)
	// from which the newer memory replaced the fact: a read as of an
	// earlier time does not rank the memory lower (see StaleTermsAt).
	MetaStaleSince = "stale_since"
	// MetaFingerprint is the metadata key of a turn memory's fingerprint,
	// a hash of the set of its words: a former reads the stored memories
	// with a batch's fingerprints to find repeats. Stores index it, so
	// that a MemoryFilter.MetadataIn of strings on it reads no more than
	// the matching memories.
	MetaFingerprint = "fingerprint"
	// MetaProvisional marks a memory formed at once by a stand-in former
	// while an asynchronous add's job waits for the engine's own (an LLM):
	// the job retires it when it applies that former's memories of the
	// same episodes.
	MetaProvisional = "provisional"
)

// Provisional reports whether m was formed by a stand-in former until a
// background job forms its episodes (see MetaProvisional).
func (m *Memory) Provisional() bool { return m.Metadata[MetaProvisional] == true }

// StaleTerms returns the words under MetaStaleTerms, lower case.
func (m *Memory) StaleTerms() []string { return m.metaStrings(MetaStaleTerms) }

// FactTerms returns the question words of a fact memory's attribute
// (MetaFactTerms), nil when it has none.
func (m *Memory) FactTerms() []string { return m.metaStrings(MetaFactTerms) }

// metaStrings returns the list of strings under key, as stored or as read
// back from JSON.
func (m *Memory) metaStrings(key string) []string {
	var out []string
	switch v := m.Metadata[key].(type) {
	case []string:
		out = v
	case []any:
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// StaleTermsAt returns the stale terms of m as of event time at: those
// whose fact had been replaced by then, and those with no time recorded.
// A nil at means now: every stale term.
func (m *Memory) StaleTermsAt(at *time.Time) []string {
	terms := m.StaleTerms()
	since, _ := m.Metadata[MetaStaleSince].(map[string]any)
	if at == nil || since == nil {
		return terms
	}
	var out []string
	for _, t := range terms {
		s, _ := since[t].(string)
		from, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !from.After(*at) {
			out = append(out, t)
		}
	}
	return out
}

// metaString returns the string metadata value under key, or "".
func (m *Memory) metaString(key string) string {
	s, _ := m.Metadata[key].(string)
	return s
}

// Role returns the role of the party the memory was formed from, or "".
func (m *Memory) Role() string { return m.metaString(MetaRole) }

// Speaker returns the name of the party the memory was formed from, or "".
func (m *Memory) Speaker() string { return m.metaString(MetaSpeaker) }

// Conversation returns the key of the conversation the memory belongs to:
// the namespace's session when the client named one, else the former's
// MetaConversation, else the day it became valid, else "".
func (m *Memory) Conversation() string {
	if n := m.Namespace; n.Session != "" {
		return "session/" + n.Agent + "/" + n.Session
	}
	if id := m.metaString(MetaConversation); id != "" {
		return id
	}
	if m.ValidFrom != nil {
		return m.ValidFrom.UTC().Format(time.DateOnly)
	}
	return ""
}

// EventPeriod returns the period [from, to) the memory's text says it
// happened in, and false when the former recorded none or recorded it
// malformed.
func (m *Memory) EventPeriod() (from, to time.Time, ok bool) {
	f, err1 := time.Parse(time.DateOnly, m.metaString(MetaEventFrom))
	t, err2 := time.Parse(time.DateOnly, m.metaString(MetaEventTo))
	if err1 != nil || err2 != nil || !t.After(f) {
		return time.Time{}, time.Time{}, false
	}
	return f, t, true
}

// Dated reports whether the former recorded an event time for the memory.
func (m *Memory) Dated() bool {
	_, ok := m.Metadata[MetaEventFrom]
	return ok
}

// Neighbours returns the ids of the memories formed from the turns just
// before and after this one, those that are recorded, earlier first.
func (m *Memory) Neighbours() []string {
	var out []string
	for _, k := range []string{MetaPrev, MetaNext} {
		if id := m.metaString(k); id != "" {
			out = append(out, id)
		}
	}
	return out
}
