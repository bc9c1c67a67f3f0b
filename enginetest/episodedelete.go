package enginetest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
)

// testDeleteEpisodeReforms: a person says, in one session, where she
// lives, a gift she got (with a word said nowhere else) and a habit; a
// week later she says where she lives again. Deleting the gift's episode,
// through the library and over HTTP, removes its turn memory and forms
// the memory of the session's run of turns again without its line (no search
// finds the word any more; its vector is that of the new text); the
// answer names both. Deleting the first statement of where she lives
// forms the fact (and the turn, said again) again from the later
// statement alone. In English, German, Spanish, French and Chinese.
func testDeleteEpisodeReforms(t *testing.T, open Open) {
	for _, tc := range []struct {
		lang, live, gift, habit, word string
		fact                          bool
	}{
		{"en", "I live in Berlin.", "My sister gave me a ukulele for my birthday.", "I practise every evening after work.", "ukulele", true},
		{"de", "Ich wohne in Berlin.", "Meine Schwester hat mir eine Ukulele zum Geburtstag geschenkt.", "Ich übe jeden Abend nach der Arbeit.", "Ukulele", true},
		{"es", "Vivo en Sevilla.", "Mi hermana me regaló un ukelele por mi cumpleaños.", "Practico todas las tardes después del trabajo.", "ukelele", true},
		{"fr", "J'habite à Lyon.", "Ma sœur m'a offert un ukulélé pour mon anniversaire.", "Je m'entraîne tous les soirs après le travail.", "ukulélé", true},
		{"zh", "我住在北京。", "姐姐送了我一把尤克里里作为生日礼物。", "我每天下班后都练习。", "尤克里里", false},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			st, emb, vias := bagBoth(t, open)
			for _, via := range vias {
				t.Run(via.name, func(t *testing.T) {
					// Each way in speaks for a user of its own: formation
					// reaches across a user's sessions, so a session
					// apart would share the first way's facts.
					ns := nsA
					ns.User, ns.Session = nsA.User+"-"+via.name, "del"
					s := engram.ScopeOf(ns)
					in := make([]engram.EpisodeInput, 3)
					for i, text := range []string{tc.live, tc.gift, tc.habit} {
						at := t0.Add(time.Duration(i) * time.Minute)
						in[i] = engram.EpisodeInput{Role: "user", Speaker: "Alice", Content: text, OccurredAt: &at}
					}
					first, err := via.svc.AddEpisodes(ctx, engram.AddEpisodesRequest{Namespace: ns, Episodes: in})
					if err != nil {
						t.Fatal(err)
					}
					aliceSays(t, via.svc, ns, t0.Add(7*24*time.Hour), tc.live)
					liveEp, giftEp := first.Episodes[0].ID, first.Episodes[1].ID
					// The memory of the session's last two turns, as a
					// former of runs of turns writes it.
					run, err := via.svc.AddMemories(ctx, engram.AddMemoriesRequest{Namespace: ns, Memories: []engram.Memory{{
						Kind: engram.KindEpisodic, Value: "Alice: " + tc.gift + "\nAlice: " + tc.habit,
						Abstraction: "Alice: " + tc.gift + "\nAlice: " + tc.habit, Sources: []string{giftEp, first.Episodes[2].ID},
						Metadata: map[string]any{engram.MetaGranularity: engram.GranularityScene, engram.MetaSpeaker: "Alice"}}}})
					if err != nil {
						t.Fatal(err)
					}
					giftTurn, scene := quotes(append(first.Memories, run...), giftEp)
					if giftTurn == "" || scene == "" {
						t.Fatalf("no turn memory and run memory quoting %q among %+v", tc.gift, first.Memories)
					}

					res, err := via.svc.DeleteEpisode(ctx, s, giftEp)
					if err != nil {
						t.Fatal(err)
					}
					if res.Episode != giftEp || !slices.Equal(res.Removed, []string{giftTurn}) || !slices.Contains(res.Reformed, scene) {
						t.Errorf("deleting the gift's episode = %+v, want %s removed and %s formed again", res, giftTurn, scene)
					}
					if ids := textIn(t, via.svc, s, tc.word); len(ids) != 0 {
						t.Errorf("a search for %q after deleting its episode finds %v", tc.word, ids)
					}
					m, err := via.svc.GetMemory(ctx, s, scene)
					if err != nil {
						t.Fatal(err)
					}
					if slices.Contains(m.Sources, giftEp) || strings.Contains(m.Value+m.Abstraction, tc.word) || !strings.Contains(m.Value, tc.habit) {
						t.Errorf("the session's memory formed again = %q / %q (sources %v), want it without the gift and with the rest", m.Value, m.Abstraction, m.Sources)
					}
					want, _ := emb.Embed(ctx, []string{m.Value})
					if v := vectorOf(t, st, emb, m, engram.FieldValue); !slices.Equal(v, want[0]) {
						t.Errorf("the session's memory formed again keeps the vector of its old text")
					}
					if _, err := via.svc.GetMemory(ctx, s, giftTurn); code(err) != engram.ENOTFOUND {
						t.Errorf("the gift's turn memory after its episode was deleted: %v, want not found", err)
					}
					if !tc.fact {
						return
					}
					fact := residence(t, via.svc, s)
					if fact == nil || !slices.Contains(fact.Sources, liveEp) || len(fact.Sources) != 2 {
						t.Fatalf("the residence fact %+v does not quote both statements", fact)
					}
					res, err = via.svc.DeleteEpisode(ctx, s, liveEp)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Contains(res.Reformed, fact.ID) || slices.Contains(res.Removed, fact.ID) {
						t.Errorf("deleting the first statement = %+v, want the fact %s formed again", res, fact.ID)
					}
					if got := residence(t, via.svc, s); got == nil || got.ID != fact.ID || slices.Contains(got.Sources, liveEp) || got.Value != fact.Value {
						t.Errorf("the fact after deleting its first statement = %+v, want %q from the later one alone", got, fact.Value)
					}
				})
			}
		})
	}
}

// quotes returns, among ms, the memory formed from episode ep alone and
// one that quotes it with others.
func quotes(ms []engram.Memory, ep string) (alone, shared string) {
	for _, m := range ms {
		switch {
		case slices.Equal(m.Sources, []string{ep}) && m.Metadata[engram.MetaFactAttribute] == nil:
			alone = m.ID
		case len(m.Sources) > 1 && slices.Contains(m.Sources, ep):
			shared = m.ID
		}
	}
	return alone, shared
}
