package finetune_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/engine"
	"github.com/engramhq/engram/finetune"
	"github.com/engramhq/engram/sqlite"
	"github.com/engramhq/engram/vault"
)

var (
	ctx   = context.Background()
	alice = engram.Namespace{Org: "acme", Project: "app", User: "alice"}
	bob   = engram.Namespace{Org: "acme", Project: "app", User: "bob"}
	day   = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
)

// mustEngine returns an engine with a vault over a new SQLite store.
func mustEngine(t *testing.T) *engine.Engine {
	t.Helper()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "engram.db"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := vault.New([]byte(strings.Repeat("k", vault.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(ctx, db, engine.Options{Vault: v})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(); db.Close() })
	return e
}

// say adds one user turn of ns at time at, formed by the rules.
func say(t *testing.T, e *engine.Engine, ns engram.Namespace, at time.Time, text string) {
	t.Helper()
	_, err := e.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: []engram.EpisodeInput{
		{Role: "user", Content: text, OccurredAt: &at}}})
	if err != nil {
		t.Fatalf("add %q: %v", text, err)
	}
}

// seed fills alice's scope with facts in four languages, one of them
// superseded, a memory superseded by hand, a deleted memory and a vault
// memory, and bob's scope with a fact of his own.
func seed(t *testing.T, e *engine.Engine) {
	t.Helper()
	say(t, e, alice, day, "I live in Berlin.")
	say(t, e, alice, day.Add(24*time.Hour), "I moved to Munich last week.")
	say(t, e, alice, day.Add(48*time.Hour), "Ich arbeite bei Siemens.")
	say(t, e, alice, day.Add(72*time.Hour), "Tengo dos gatos.")
	say(t, e, alice, day.Add(96*time.Hour), "Mi color favorito es el azul.")
	say(t, e, bob, day, "I live in Paris.")
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: alice, Memories: []engram.Memory{
		{Kind: engram.KindSemantic, Value: "My secret hobby is falconry.", Cues: []string{"falconry"}},
		{Kind: engram.KindProcedural, Value: "I take my coffee black.", Cues: []string{"coffee"}},
		{Kind: engram.KindVault, Value: "My bank PIN is 4711.", Cues: []string{"PIN"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.DeleteMemory(ctx, engram.ScopeOf(alice), ms[0].ID, engram.DeleteOptions{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.SupersedeMemory(ctx, engram.ScopeOf(alice), ms[1].ID, engram.SupersedeRequest{
		New: engram.Memory{Kind: engram.KindProcedural, Value: "I take my coffee with oat milk.", Cues: []string{"coffee"}}}); err != nil {
		t.Fatal(err)
	}
}

func export(t *testing.T, svc engram.Service, ns engram.Namespace, o finetune.Options) (string, finetune.Counts) {
	t.Helper()
	var buf bytes.Buffer
	c, err := finetune.Write(engram.WithVault(ctx, "test"), svc, engram.ScopeOf(ns), o, &buf)
	if err != nil {
		t.Fatalf("export %s: %v", o.Format, err)
	}
	return buf.String(), c
}

// decodeStrict decodes one line into v, refusing unknown fields and
// trailing data.
func decodeStrict(t *testing.T, line string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("line %q: %v", line, err)
	}
	if dec.More() {
		t.Fatalf("line %q: more than one JSON value", line)
	}
}

// checkRoles fails unless msgs have exactly roles, each with content.
func checkRoles(t *testing.T, line string, msgs []finetune.Message, roles ...string) {
	t.Helper()
	if len(msgs) != len(roles) {
		t.Fatalf("line %q: %d messages, want roles %v", line, len(msgs), roles)
	}
	for i, m := range msgs {
		if m.Role != roles[i] || strings.TrimSpace(m.Content) == "" {
			t.Fatalf("line %q: message %d = %+v, want role %s with content", line, i, m, roles[i])
		}
	}
}

// sftPairs checks every line of an SFT export and returns its question →
// answer pairs.
func sftPairs(t *testing.T, out string) map[string][]string {
	t.Helper()
	pairs := map[string][]string{}
	for _, line := range lines(out) {
		var r finetune.SFTRecord
		decodeStrict(t, line, &r)
		checkRoles(t, line, r.Messages, "system", "user", "assistant")
		pairs[r.Messages[1].Content] = append(pairs[r.Messages[1].Content], r.Messages[2].Content)
	}
	return pairs
}

func lines(out string) []string {
	if out == "" {
		return nil
	}
	if !strings.HasSuffix(out, "\n") {
		panic("export does not end in a newline")
	}
	return strings.Split(strings.TrimSuffix(out, "\n"), "\n")
}

func TestSFTSchemaAndContent(t *testing.T) {
	e := mustEngine(t)
	seed(t, e)
	out, c := export(t, e, alice, finetune.Options{Format: finetune.SFT})
	pairs := sftPairs(t, out)
	if c.Records != len(lines(out)) || c.Records == 0 {
		t.Fatalf("counts %+v for %d lines", c, len(lines(out)))
	}
	for q, want := range map[string]string{
		"Where do you live?":                "I live in Munich.",
		"Wo arbeitest du?":                  "Ich arbeite bei Siemens.",
		"¿Qué cantidad de gatos tienes?":    "Tengo dos gatos.",
		"¿Qué color prefieres?":             "Prefiero el azul.",
		"How do you like to handle coffee?": "I take my coffee with oat milk.",
	} {
		if got := pairs[q]; len(got) != 1 || got[0] != want {
			t.Errorf("answers to %q = %q, want [%q]\nexport:\n%s", q, got, want, out)
		}
	}
	for _, gone := range []string{"Berlin", "falconry", "4711", "PIN", "Paris", "black"} {
		if strings.Contains(out, gone) {
			t.Errorf("the SFT export contains %q (superseded, deleted, vault or another user's):\n%s", gone, out)
		}
	}
	if !strings.Contains(out, `"content":"Du bist alice. Antworte als du selbst, in der ersten Person."`) {
		t.Errorf("no German system prompt for the German fact:\n%s", out)
	}
}

func TestDPOPrefersCurrentFacts(t *testing.T) {
	e := mustEngine(t)
	seed(t, e)
	out, _ := export(t, e, alice, finetune.Options{Format: finetune.DPO})
	type pref struct{ prompt, chosen, rejected string }
	var got []pref
	for _, line := range lines(out) {
		var r finetune.DPORecord
		decodeStrict(t, line, &r)
		checkRoles(t, line, r.Prompt, "system", "user")
		checkRoles(t, line, r.Chosen, "assistant")
		checkRoles(t, line, r.Rejected, "assistant")
		if r.Chosen[0].Content == r.Rejected[0].Content {
			t.Errorf("line %q: chosen equals rejected", line)
		}
		got = append(got, pref{r.Prompt[1].Content, r.Chosen[0].Content, r.Rejected[0].Content})
	}
	want := []pref{
		{"Where do you live?", "I live in Munich.", "I live in Berlin."},
		{"How do you like to handle coffee?", "I take my coffee with oat milk.", "I take my coffee black."},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("preferences = %q\nwant %q", got, want)
	}
	for _, gone := range []string{"falconry", "4711", "Paris"} {
		if strings.Contains(out, gone) {
			t.Errorf("the DPO export contains %q:\n%s", gone, out)
		}
	}
}

// TestDeletedCurrentDropsItsPairs: once the memory that replaced a fact is
// deleted, neither it nor the fact it replaced is taught as current.
func TestDeletedCurrentDropsItsPairs(t *testing.T) {
	e := mustEngine(t)
	seed(t, e)
	page, err := e.ListMemories(ctx, engram.ScopeOf(alice), engram.MemoryFilter{Metadata: map[string]any{engram.MetaFactAttribute: "residence"}})
	if err != nil || len(page.Memories) != 1 {
		t.Fatalf("residence facts = %+v, %v", page, err)
	}
	if err := e.DeleteMemory(ctx, engram.ScopeOf(alice), page.Memories[0].ID, engram.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []finetune.Format{finetune.SFT, finetune.DPO} {
		out, _ := export(t, e, alice, finetune.Options{Format: f})
		for _, gone := range []string{"Munich", "Berlin"} {
			if strings.Contains(out, gone) {
				t.Errorf("%s export names %q after the current residence was deleted:\n%s", f, gone, out)
			}
		}
	}
}

func TestDeterministic(t *testing.T) {
	e := mustEngine(t)
	seed(t, e)
	for _, f := range []finetune.Format{finetune.SFT, finetune.DPO} {
		a, _ := export(t, e, alice, finetune.Options{Format: f})
		b, _ := export(t, e, alice, finetune.Options{Format: f})
		if a != b || a == "" {
			t.Errorf("%s: two exports differ or are empty:\n%s\n---\n%s", f, a, b)
		}
	}
}

func TestProfile(t *testing.T) {
	e := mustEngine(t)
	old := engram.ProfileMemory(alice, []string{"Lebt in Berlin", "Arbeitet bei Siemens"}, nil)
	ms, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: alice, Memories: []engram.Memory{old}})
	if err != nil {
		t.Fatal(err)
	}
	cur := engram.ProfileMemory(alice, []string{"Lebt in München", "Arbeitet bei Siemens"}, []string{"Ist gerade im Urlaub"})
	if _, err := e.UpdateMemory(ctx, engram.ScopeOf(alice), ms[0].ID, engram.MemoryPatch{Value: &cur.Value, Metadata: cur.Metadata}); err != nil {
		t.Fatal(err)
	}
	sft, _ := export(t, e, alice, finetune.Options{Format: finetune.SFT})
	pairs := sftPairs(t, sft)
	if got, want := pairs["Erzähl mir etwas über dich."], "Über mich: Lebt in München; Arbeitet bei Siemens"; len(got) != 1 || got[0] != want {
		t.Errorf("profile traits = %q, want %q\n%s", got, want, sft)
	}
	if got, want := pairs["Wie geht es dir gerade?"], "Im Moment: Ist gerade im Urlaub"; len(got) != 1 || got[0] != want {
		t.Errorf("profile states = %q, want %q", got, want)
	}
	dpo, _ := export(t, e, alice, finetune.Options{Format: finetune.DPO})
	var r finetune.DPORecord
	if ls := lines(dpo); len(ls) != 1 {
		t.Fatalf("profile DPO = %q, want one line", dpo)
	}
	decodeStrict(t, lines(dpo)[0], &r)
	if r.Chosen[0].Content != "Über mich: Lebt in München; Arbeitet bei Siemens" || r.Rejected[0].Content != "Über mich: Lebt in Berlin; Arbeitet bei Siemens" {
		t.Errorf("profile preference = %+v", r)
	}
}

func TestBadOptions(t *testing.T) {
	e := mustEngine(t)
	for name, tc := range map[string]struct {
		s    engram.Scope
		f    finetune.Format
		want string
	}{
		"format":  {engram.ScopeOf(alice), "csv", "format"},
		"no user": {engram.Scope{Org: "acme", Project: "app"}, finetune.SFT, "user"},
	} {
		var buf bytes.Buffer
		_, err := finetune.Write(ctx, e, tc.s, finetune.Options{Format: tc.f}, &buf)
		if engram.ErrorCode(err) != engram.EINVALID || !strings.Contains(engram.ErrorMessage(err), tc.want) || buf.Len() > 0 {
			t.Errorf("%s: %v (wrote %d bytes), want EINVALID naming %s", name, err, buf.Len(), tc.want)
		}
	}
}

// TestLanguages: a fact said in German and replaced in English is asked
// and rejected in English; a Chinese memory is asked in Chinese; a French
// fact has French phrasing.
func TestLanguages(t *testing.T) {
	e := mustEngine(t)
	carol := engram.Namespace{Org: "acme", Project: "app", User: "carol"}
	say(t, e, carol, day, "Ich wohne in Hamburg.")
	say(t, e, carol, day.Add(24*time.Hour), "I live in Leipzig now.")
	say(t, e, carol, day.Add(48*time.Hour), "J'ai trois chats.")
	if _, err := e.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: carol, Memories: []engram.Memory{
		{Kind: engram.KindEpisodic, Language: "zh", Value: "我去年和朋友去了长城。", Cues: []string{"长城"}},
	}}); err != nil {
		t.Fatal(err)
	}
	sft, _ := export(t, e, carol, finetune.Options{Format: finetune.SFT})
	pairs := sftPairs(t, sft)
	for q, want := range map[string]string{
		"Where do you live?":       "I live in Leipzig.",
		"Combien de chats as-tu ?": "J'ai trois chats.",
		"关于长城，发生了什么？":              "我去年和朋友去了长城。",
	} {
		if got := pairs[q]; len(got) != 1 || got[0] != want {
			t.Errorf("answers to %q = %q, want [%q]\n%s", q, got, want, sft)
		}
	}
	if !strings.Contains(sft, "你是carol。") {
		t.Errorf("no Chinese system prompt:\n%s", sft)
	}
	dpo, _ := export(t, e, carol, finetune.Options{Format: finetune.DPO})
	ls := lines(dpo)
	if len(ls) != 1 {
		t.Fatalf("DPO = %q, want one line", dpo)
	}
	var r finetune.DPORecord
	decodeStrict(t, ls[0], &r)
	if r.Prompt[1].Content != "Where do you live?" || r.Chosen[0].Content != "I live in Leipzig." || r.Rejected[0].Content != "I live in Hamburg." {
		t.Errorf("cross-language preference = %+v", r)
	}
}

// TestPlans: a cancelled plan is taught as off, and preferred to the plan.
func TestPlans(t *testing.T) {
	e := mustEngine(t)
	dan := engram.Namespace{Org: "acme", Project: "app", User: "dan"}
	say(t, e, dan, day, "I'm going to Lisbon in May.")
	say(t, e, dan, day.Add(24*time.Hour), "The trip to Lisbon is cancelled.")
	say(t, e, dan, day.Add(48*time.Hour), "Estoy casada.")
	sft, _ := export(t, e, dan, finetune.Options{Format: finetune.SFT})
	pairs := sftPairs(t, sft)
	for q, want := range map[string]string{
		"Do you have any travel plans?": "No, the trip to Lisbon is off.",
		"¿Tienes pareja?":               "Estoy casada.",
	} {
		if got := pairs[q]; len(got) != 1 || got[0] != want {
			t.Errorf("answers to %q = %q, want [%q]\n%s", q, got, want, sft)
		}
	}
	if strings.Contains(sft, "going to Lisbon") {
		t.Errorf("the cancelled plan is taught as current:\n%s", sft)
	}
	dpo, _ := export(t, e, dan, finetune.Options{Format: finetune.DPO})
	var r finetune.DPORecord
	if ls := lines(dpo); len(ls) != 1 {
		t.Fatalf("DPO = %q, want one line", dpo)
	}
	decodeStrict(t, lines(dpo)[0], &r)
	if r.Chosen[0].Content != "No, the trip to Lisbon is off." || r.Rejected[0].Content != "Yes, I'm going to Lisbon." {
		t.Errorf("plan preference = %+v", r)
	}
}
