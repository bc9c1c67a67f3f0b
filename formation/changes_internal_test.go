package formation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram"
	"github.com/engramhq/engram/lang"
)

// TestChangeFactsOf: a job stated as title and employer gives both facts,
// what one drinks now, a home given as a street, and the Chinese
// phrasings, in each of the five languages; others, questions and
// negations give none of them.
func TestChangeFactsOf(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string // "attr=value"
	}{
		{"I quit teaching and started a new job as a software engineer at Siemens.", []string{"occupation=software engineer", "workplace=Siemens"}},
		{"I now work as a nurse at St Mary Hospital.", []string{"occupation=nurse", "workplace=St Mary Hospital"}},
		{"Now I only drink green tea.", []string{"drink=green tea"}},
		{"I live on Baker Street now.", []string{"residence=Baker Street"}},
		{"Ich arbeite jetzt als Softwareentwicklerin bei Siemens.", []string{"occupation=Softwareentwicklerin", "workplace=Siemens"}},
		{"Ich habe als Lehrer aufgehört und eine neue Stelle als Ingenieur bei Bosch angefangen.", []string{"occupation=Ingenieur", "workplace=Bosch"}},
		{"Jetzt trinke ich nur noch grünen Tee.", []string{"drink=grünen Tee"}},
		{"Ich wohne jetzt in der Leopoldstraße.", []string{"residence=Leopoldstraße"}},
		{"Trabajo como enfermera en Sanitas.", []string{"occupation=enfermera", "workplace=Sanitas"}},
		{"Empecé un trabajo nuevo como ingeniera de software en Telefónica.", []string{"occupation=ingeniera de software", "workplace=Telefónica"}},
		{"Ahora solo bebo té verde.", []string{"drink=té verde"}},
		{"Vivo ahora en la calle de Alcalá.", []string{"residence=calle de Alcalá"}},
		{"Je travaille comme infirmière chez Sanofi.", []string{"occupation=infirmière", "workplace=Sanofi"}},
		{"J'ai commencé un nouveau poste d'ingénieur chez Airbus.", []string{"occupation=ingénieur", "workplace=Airbus"}},
		{"Maintenant je ne bois que du thé vert.", []string{"drink=thé vert"}},
		{"J'habite maintenant rue de Rivoli.", []string{"residence=rue de Rivoli"}},
		{"我现在在西门子当软件工程师。", []string{"occupation=软件工程师", "workplace=西门子"}},
		{"我现在住在施瓦宾。", []string{"residence=施瓦宾"}},
		{"我搬到了慕尼黑。", []string{"residence=慕尼黑"}},
		{"我不再喝咖啡了，现在只喝绿茶。", []string{"drink=绿茶"}},
		{"我最喜欢的饮料是黑咖啡。", []string{"favourite 饮料=黑咖啡"}},
		// Negatives: others, questions, negations.
		{"My brother started a new job as a pilot at Lufthansa.", nil},
		{"Do you work as a nurse at St Mary Hospital?", nil},
		{"I don't drink coffee anymore.", nil},
		{"Ich trinke keinen Kaffee mehr.", nil},
		{"Je ne bois plus de café.", nil},
		{"Mein Bruder arbeitet als Pilot bei Lufthansa.", nil},
		{"他现在只喝绿茶。", nil},
		{"我喝了很多水。", nil},
		{"我跟朋友聊天，喝茶。", nil},
		{"I just drink water when I run.", []string{"drink=water"}},
		{"你在西门子当工程师吗？", nil},
	} {
		fs := withoutStopped(factsOf(lang.Detect(tc.text), tc.text), stopsOf(lang.Detect(tc.text), tc.text))
		var got []string
		for _, f := range fs {
			got = append(got, f.attr+"="+f.value)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("facts of %q = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestStopsOf: stopping, quitting, "no longer", giving up and switching
// from, in each of the five languages, name what was stopped; others,
// questions, conditions and wishes stop nothing.
func TestStopsOf(t *testing.T) {
	for _, tc := range []struct{ text, thing string }{
		{"I stopped drinking coffee last week; now I only drink green tea.", "coffee"},
		{"I quit teaching and started a new job.", "teaching"},
		{"I'm no longer a vegetarian.", "vegetarian"},
		{"I gave up smoking.", "smoking"},
		{"I no longer work at Siemens.", "Siemens"},
		{"I don't eat meat anymore.", "meat"},
		{"I switched from coffee to tea.", "coffee"},
		{"Ich bin von Kaffee auf Tee umgestiegen.", "Kaffee"},
		{"Ich habe meinen Job bei Siemens gekündigt.", "Siemens"},
		{"Me pasé del café al té.", "café"},
		{"Je suis passée du café au thé.", "café"},
		{"Ich trinke keinen Kaffee mehr.", "Kaffee"},
		{"Ich habe letzte Woche aufgehört, Kaffee zu trinken.", "Kaffee"},
		{"Ich bin nicht mehr Lehrerin.", "Lehrerin"},
		{"Ich habe mit dem Rauchen aufgehört.", "Rauchen"},
		{"Ya no tomo café.", "café"},
		{"Dejé de tomar café la semana pasada.", "café"},
		{"Ya no soy profesora.", "profesora"},
		{"Je ne bois plus de café.", "café"},
		{"J'ai arrêté de boire du café la semaine dernière.", "café"},
		{"Je ne suis plus professeur.", "professeur"},
		{"我不再喝咖啡了。", "咖啡"},
		{"我戒了咖啡。", "咖啡"},
		{"我辞去了教师的工作，在西门子当工程师。", "教师的工作"},
	} {
		st := stopsOf(lang.Detect(tc.text), tc.text)
		if len(st) == 0 || st[0].thing != tc.thing {
			t.Errorf("stopsOf(%q) = %+v, want %q", tc.text, st, tc.thing)
		}
	}
	for _, text := range []string{
		"My brother stopped drinking coffee.", "Did you quit your job?", "If I quit coffee, I'll be tired.", "I never stopped loving coffee.",
		"I want to quit smoking.", "My wife and I just left for our European vacation!", "I left at noon.", "Then I stopped by Whole Foods.", "I need to sell the items I no longer use.", "I'll continue from where I left off.", "I left my family behind.", "Mein Bruder trinkt keinen Kaffee mehr.", "Ich habe meine Arbeit bei Siemens sehr gern.", "Wenn ich keinen Kaffee mehr trinke, bin ich müde.",
		"Mi hermano ya no come carne.", "¿Ya no tomas café?", "Il ne boit plus de café.", "Si j'arrête le café, je serai fatigué.",
		"他不再喝咖啡了。", "你戒了咖啡吗？", "如果我不再喝咖啡，我会很累。",
	} {
		if st := stopsOf(lang.Detect(text), text); len(st) != 0 {
			t.Errorf("stopsOf(%q) = %+v, want none", text, st)
		}
	}
}

// TestChangeDecisions: within one batch of one speaker's turns, a stop
// with a new value supersedes the stopped fact by the new, a stop alone
// ends it, a job of title and employer supersedes both old facts, a new
// home refines the held one when the turn relates them or names a street,
// supersedes it when the turn says one moved, and is added beside it when
// neither can be told; others' and conditional stops change nothing.
func TestChangeDecisions(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		turns []string
		want  []string // the fact ops after the first turn's, in order: "OP attr value"
	}{
		{"en stop and start", []string{"My favourite drink is black coffee.", "I stopped drinking coffee last week; now I only drink green tea."},
			[]string{"SUPERSEDE drink green tea"}},
		{"de stop and start", []string{"Mein Lieblingsgetränk ist schwarzer Kaffee.", "Ich habe letzte Woche aufgehört, Kaffee zu trinken; jetzt trinke ich nur noch grünen Tee."},
			[]string{"SUPERSEDE drink grünen Tee"}},
		{"es stop and start", []string{"Mi bebida favorita es el café solo.", "Dejé de tomar café la semana pasada; ahora solo bebo té verde."},
			[]string{"SUPERSEDE drink té verde"}},
		{"fr stop and start", []string{"Je bois du café noir.", "J'ai arrêté de boire du café ; maintenant je ne bois que du thé vert."},
			[]string{"SUPERSEDE drink thé vert"}},
		{"zh stop and start", []string{"我最喜欢的饮料是黑咖啡。", "我不再喝咖啡了，现在只喝绿茶。"},
			[]string{"SUPERSEDE drink 绿茶"}},
		{"en switch", []string{"My favourite drink is black coffee.", "I switched from coffee to tea."},
			[]string{"SUPERSEDE favourite drink tea"}},
		{"de switch", []string{"Mein Lieblingsgetränk ist schwarzer Kaffee.", "Ich bin letzte Woche von Kaffee auf Tee umgestiegen."},
			[]string{"SUPERSEDE favourite getrank Tee"}},
		{"es switch", []string{"Mi bebida favorita es el café solo.", "Me pasé del café al té."},
			[]string{"SUPERSEDE favourite beb té"}},
		{"fr switch", []string{"Je bois du café noir.", "Je suis passé du café au thé."},
			[]string{"SUPERSEDE drink thé"}},
		{"en stop alone", []string{"I am vegetarian.", "I'm no longer a vegetarian."},
			[]string{"SUPERSEDE diet no longer vegetarian"}},
		{"de stop alone", []string{"Ich trinke schwarzen Kaffee.", "Ich trinke keinen Kaffee mehr."},
			[]string{"SUPERSEDE drink nicht mehr schwarzen Kaffee"}},
		{"es stop alone", []string{"Trabajo como profesora en Cervantes.", "Ya no soy profesora."},
			[]string{"SUPERSEDE occupation ya no profesora"}},
		{"zh stop alone", []string{"我每天喝咖啡。", "我戒了咖啡。"},
			[]string{"SUPERSEDE drink 不再 咖啡"}},
		{"en job", []string{"I work as a teacher at Lincoln High.", "I quit teaching and started a new job as a software engineer at Siemens."},
			[]string{"SUPERSEDE occupation software engineer", "SUPERSEDE workplace Siemens"}},
		{"de job", []string{"Ich arbeite als Lehrer bei Montessori.", "Ich arbeite jetzt als Ingenieur bei Siemens."},
			[]string{"SUPERSEDE occupation Ingenieur", "SUPERSEDE workplace Siemens"}},
		{"es job", []string{"Trabajo como profesora en Cervantes.", "Trabajo ahora como ingeniera en Telefónica."},
			[]string{"SUPERSEDE occupation ingeniera", "SUPERSEDE workplace Telefónica"}},
		{"fr job", []string{"Je travaille comme professeur chez Lycée Hugo.", "Je travaille maintenant comme ingénieur chez Airbus."},
			[]string{"SUPERSEDE occupation ingénieur", "SUPERSEDE workplace Airbus"}},
		{"zh job", []string{"我在学校当老师。", "我辞去了老师的工作，现在在西门子当软件工程师。"},
			[]string{"SUPERSEDE occupation 软件工程师", "SUPERSEDE workplace 西门子"}},
		{"en district in the turn", []string{"I live in Munich.", "I live in Schwabing now, a district of Munich."},
			[]string{"SUPERSEDE residence Schwabing, Munich"}},
		{"de bare new home replaces", []string{"Ich wohne in München.", "Ich wohne jetzt in Schwabing."},
			[]string{"SUPERSEDE residence Schwabing"}},
		{"de street", []string{"Ich wohne in München.", "Ich wohne jetzt in der Leopoldstraße."},
			[]string{"SUPERSEDE residence Leopoldstraße, München"}},
		{"es held place named", []string{"Vivo en Madrid.", "Ahora vivo en Chamberí, en Madrid."},
			[]string{"SUPERSEDE residence Chamberí, Madrid"}},
		{"fr quartier", []string{"J'habite à Paris.", "J'habite maintenant à Montmartre, un quartier que j'adore."},
			[]string{"SUPERSEDE residence Montmartre, Paris"}},
		{"zh district", []string{"我住在北京。", "我现在住在朝阳区。"},
			[]string{"SUPERSEDE residence 朝阳区, 北京"}},
		{"en moved elsewhere", []string{"I live in Munich.", "I moved to Berlin from Munich."},
			[]string{"SUPERSEDE residence Berlin"}},
		{"de moved", []string{"Ich wohne in Berlin.", "Ich bin nach München gezogen."},
			[]string{"SUPERSEDE residence München"}},
		{"es moved", []string{"Vivo en Berlín.", "Me mudé a Múnich el mes pasado."},
			[]string{"SUPERSEDE residence Múnich"}},
		{"fr moved", []string{"J'habite à Paris.", "J'ai déménagé à Lyon."},
			[]string{"SUPERSEDE residence Lyon"}},
		{"zh moved", []string{"我住在北京。", "我搬到了上海。"},
			[]string{"SUPERSEDE residence 上海"}},
		{"a bare new home, then two moves", []string{"Ich wohne in München.", "Ich wohne jetzt in Schwabing.", "Ich bin nach Berlin gezogen.", "Ich bin nach Hamburg gezogen."},
			[]string{"SUPERSEDE residence Schwabing", "SUPERSEDE residence Berlin", "SUPERSEDE residence Hamburg"}},
		{"en bare new city replaces", []string{"I live in Berlin.", "I live in Madrid now."},
			[]string{"SUPERSEDE residence Madrid"}},
		{"after a stop", []string{"My favourite drink is black coffee.", "I don't drink coffee anymore.", "My favourite drink is green tea."},
			[]string{"SUPERSEDE favourite drink no longer black coffee", "SUPERSEDE favourite drink green tea"}},
		{"broader again", []string{"I live in Munich.", "I live in Schwabing, Munich.", "I live in Munich."},
			[]string{"SUPERSEDE residence Schwabing, Munich", "MERGE"}},
		{"more exact time", []string{"Our team meeting is on Friday.", "Our team meeting is on Friday at 3pm."},
			[]string{"SUPERSEDE time of team meet on Friday at 3pm"}},
		{"en count", []string{"I have one dog, a beagle.", "We adopted a greyhound, so now I have two dogs."},
			[]string{"SUPERSEDE count of dog two"}},
		{"de count verb second", []string{"Ich habe zwei Katzen.", "Wir haben ein Kätzchen geholt, jetzt habe ich drei Katzen."},
			[]string{"SUPERSEDE count of katz drei"}},
		{"en schedule moved", []string{"I go swimming on Tuesdays to unwind.", "I moved my swimming to Thursdays since the pool changed its lanes."},
			[]string{"SUPERSEDE time of swim Thursdays"}},
		{"es schedule moved", []string{"Mi clase de guitarra es los martes por la tarde.", "Mi clase de guitarra es ahora los jueves, el profesor cambió el horario."},
			[]string{"SUPERSEDE time of clas de guitarr los jueves"}},
		{"zh work", []string{"我在华为工作，做手机芯片测试。", "我现在在腾讯工作，做游戏服务器。"},
			[]string{"SUPERSEDE workplace 腾讯"}},
		{"zh moved with a time", []string{"我住在北京，在海淀区。", "我上个月搬到上海了，现在住在浦东。"},
			[]string{"SUPERSEDE residence 上海"}},
		{"zh drink changed", []string{"我每天早上喝咖啡，不然没精神。", "我不再喝咖啡了，改喝绿茶。"},
			[]string{"SUPERSEDE drink 绿茶"}},
		// Negatives: nothing held is ended.
		{"others stop", []string{"My favourite drink is black coffee.", "My brother stopped drinking coffee."}, nil},
		{"conditional", []string{"My favourite drink is black coffee.", "If I quit coffee, I'll be tired all day."}, nil},
		{"question", []string{"Ich trinke schwarzen Kaffee.", "Trinkst du keinen Kaffee mehr?"}, nil},
		{"other thing", []string{"My favourite drink is black coffee.", "I quit smoking last year."}, nil},
		{"a plan's own cancellation", []string{"Voy a Lisboa en mayo.", "Ya no voy a Lisboa."}, []string{"SUPERSEDE plan trip Lisboa"}},
		{"zh others", []string{"我每天喝咖啡。", "他不再喝咖啡了。"}, nil},
		{"zh others work", []string{"我在华为工作。", "我妹妹在腾讯工作。"}, nil},
		{"others count", []string{"I have one dog.", "My sister has two dogs."}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps := make([]engram.Episode, len(tc.turns))
			for i, text := range tc.turns {
				eps[i] = engram.Episode{ID: engram.NewID(), Role: "user", Speaker: "Bob", Content: text, OccurredAt: at.Add(time.Duration(i) * 24 * time.Hour)}
			}
			ops, err := Rules{}.Form(context.Background(), engram.FormRequest{Episodes: eps})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, op := range ops {
				if slices.Contains(op.Memory.Sources, eps[0].ID) || (!isFact(&op.Memory) && op.Op != engram.OpMerge) {
					continue
				}
				attr, _ := op.Memory.Metadata[engram.MetaFactAttribute].(string)
				got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s", op.Op, attr, factValue(&op.Memory))))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("fact ops = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRetold checks that a fact told again in another script within the
// hour leaves the held one as it was instead of replacing it, while the
// same words a month later, or a value in the same script, replace it.
func TestRetold(t *testing.T) {
	at := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name        string
		first, then string
		after       time.Duration
		want        string
	}{
		{"zh after en within the hour", "I only drink green tea.", "我现在每天早上喝绿茶。", time.Minute, ""},
		{"en after zh within the hour", "我现在只喝绿茶。", "I only drink green tea.", 10 * time.Minute, ""},
		{"zh after en a month later", "I only drink green tea.", "我现在每天早上喝红茶。", 30 * 24 * time.Hour, "SUPERSEDE drink 红茶"},
		{"same script within the hour", "我每天早上喝咖啡。", "我现在只喝绿茶。", time.Minute, "SUPERSEDE drink 绿茶"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			eps := []engram.Episode{
				{ID: engram.NewID(), Role: "user", Speaker: "Bob", Content: tc.first, OccurredAt: at},
				{ID: engram.NewID(), Role: "user", Speaker: "Bob", Content: tc.then, OccurredAt: at.Add(tc.after)},
			}
			ops, err := Rules{}.Form(context.Background(), engram.FormRequest{Episodes: eps})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, op := range ops {
				if slices.Contains(op.Memory.Sources, eps[0].ID) || (!isFact(&op.Memory) && op.Op != engram.OpMerge) {
					continue
				}
				attr, _ := op.Memory.Metadata[engram.MetaFactAttribute].(string)
				got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s %s", op.Op, attr, factValue(&op.Memory))))
			}
			var want []string // no fact op for a retelling
			if tc.want != "" {
				want = []string{tc.want}
			}
			if !slices.Equal(got, want) {
				t.Errorf("fact ops = %q, want %q", got, tc.want)
			}
		})
	}
}
