package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// writeJSON writes v as one indented JSON document.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// summaryLen is how many characters of text a one-line listing shows.
const summaryLen = 100

// oneLine folds whitespace runs (newlines too) into single spaces and cuts
// the result to max characters, marking a cut with "…".
func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// memorySummary is the abstraction and the value, as far as there is room.
func memorySummary(m *engram.Memory) string {
	if m.Abstraction != "" && m.Abstraction != m.Value {
		return oneLine(m.Abstraction+" — "+m.Value, summaryLen)
	}
	return oneLine(m.Value, summaryLen)
}

// memoryLine is the one-line form of a memory in lists:
// ID KIND STATUS vN SUMMARY.
func memoryLine(m *engram.Memory) string {
	return fmt.Sprintf("%s  %-10s %-10s v%-3d %s", m.ID, m.Kind, m.Status, m.Version, memorySummary(m))
}

// episodeLine is the one-line form of an episode: ID TIME ROLE SPEAKER: TEXT.
func episodeLine(e *engram.Episode) string {
	who := e.Role
	if e.Speaker != "" {
		who = strings.TrimSpace(who + " " + e.Speaker)
	}
	if who == "" {
		who = "-"
	}
	return fmt.Sprintf("%s  %s  %s: %s", e.ID, formatTime(e.OccurredAt), who, oneLine(e.Content, summaryLen))
}

func formatTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func namespaceString(n engram.Namespace) string {
	s := n.Org + "/" + n.Project
	for _, p := range []struct{ k, v string }{{"user", n.User}, {"agent", n.Agent}, {"session", n.Session}} {
		if p.v != "" {
			s += " " + p.k + "=" + p.v
		}
	}
	return s
}

// kv prints the fields of a record as aligned "key: value" lines, skipping
// empty values.
type kv struct {
	w    io.Writer
	rows [][2]string
}

func (p *kv) add(k, v string) {
	if v != "" {
		p.rows = append(p.rows, [2]string{k, v})
	}
}

func (p *kv) addTime(k string, t *time.Time) {
	if t != nil {
		p.add(k, formatTime(*t))
	}
}

func (p *kv) addMeta(m map[string]any) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b, _ := json.Marshal(m[k])
		p.add("meta."+k, string(b))
	}
}

func (p *kv) flush() {
	width := 0
	for _, r := range p.rows {
		width = max(width, len(r[0]))
	}
	for _, r := range p.rows {
		fmt.Fprintf(p.w, "%-*s  %s\n", width+1, r[0]+":", r[1])
	}
}

func printMemory(w io.Writer, m *engram.Memory) {
	p := &kv{w: w}
	p.add("id", m.ID)
	p.add("namespace", namespaceString(m.Namespace))
	p.add("kind", string(m.Kind))
	p.add("status", string(m.Status))
	p.add("version", fmt.Sprint(m.Version))
	p.add("abstraction", m.Abstraction)
	p.add("cues", strings.Join(m.Cues, ", "))
	p.add("value", m.Value)
	p.add("language", m.Language)
	p.add("confidence", fmt.Sprint(m.Confidence))
	p.add("importance", fmt.Sprint(m.Importance))
	p.addTime("valid_from", m.ValidFrom)
	p.addTime("valid_to", m.ValidTo)
	p.addTime("created_at", &m.CreatedAt)
	p.addTime("updated_at", &m.UpdatedAt)
	p.addTime("expired_at", m.ExpiredAt)
	p.addTime("expires_at", m.ExpiresAt)
	p.add("sources", strings.Join(m.Sources, ", "))
	p.add("superseded_by", m.SupersededBy)
	p.add("access_count", fmt.Sprint(m.AccessCount))
	p.addTime("last_accessed", m.LastAccessed)
	p.addMeta(m.Metadata)
	p.flush()
}

func printEpisode(w io.Writer, e *engram.Episode) {
	p := &kv{w: w}
	p.add("id", e.ID)
	p.add("namespace", namespaceString(e.Namespace))
	p.add("role", e.Role)
	p.add("speaker", e.Speaker)
	p.add("modality", string(e.Modality))
	p.addTime("occurred_at", &e.OccurredAt)
	p.addTime("received_at", &e.ReceivedAt)
	p.addMeta(e.Metadata)
	p.add("content", e.Content)
	p.flush()
}
