package finetune

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/engramhq/engram"
)

// factTemplate phrases one fact attribute: the question, the answer, and
// the answer once the plan is called off. {v} is the value, {n} the noun
// of a favourite or count as said, {N} the same capitalised, {a} "a" or
// "an" before the value.
type factTemplate struct{ q, a, off string }

// factTemplates are keyed by language, then by the attribute the rule
// former writes (formation/facts.go, plans.go), with "favourite" and
// "count" for their noun-named attributes, "diet again" for food eaten
// again and "plan job any" for a new job without an employer.
var factTemplates = map[string]map[string]factTemplate{
	"en": {
		"residence":    {"Where do you live?", "I live in {v}.", ""},
		"workplace":    {"Where do you work?", "I work at {v}.", ""},
		"occupation":   {"What do you do for a living?", "I work as {a} {v}.", ""},
		"diet":         {"Do you follow a particular diet?", "Yes, I'm {v}.", ""},
		"diet again":   {"Do you follow a particular diet?", "I eat {v} again.", ""},
		"relationship": {"Are you in a relationship?", "I'm {v}.", ""},
		"favourite":    {"What is your favourite {n}?", "My favourite {n} is {v}.", ""},
		"count":        {"How many {n} do you have?", "I have {v} {n}.", ""},
		"plan trip":    {"Do you have any travel plans?", "Yes, I'm going to {v}.", "No, the trip to {v} is off."},
		"plan move":    {"Are you planning to move?", "Yes, I'm moving to {v}.", "No, I'm no longer moving to {v}."},
		"plan job":     {"Are you starting a new job?", "Yes, I'm starting a new job at {v}.", "No, I'm not taking the new job."},
		"plan job any": {"Are you starting a new job?", "Yes, I'm starting {v}.", "No, I'm not taking the new job."},
	},
	"de": {
		"residence":    {"Wo wohnst du?", "Ich wohne in {v}.", ""},
		"workplace":    {"Wo arbeitest du?", "Ich arbeite bei {v}.", ""},
		"occupation":   {"Was machst du beruflich?", "Ich arbeite als {v}.", ""},
		"diet":         {"Wie ernährst du dich?", "Ich bin {v}.", ""},
		"diet again":   {"Wie ernährst du dich?", "Ich esse wieder {v}.", ""},
		"relationship": {"Bist du in einer Beziehung?", "Ich bin {v}.", ""},
		"favourite":    {"Was ist dein Favorit, wenn es um {N} geht?", "Am liebsten mag ich {v}.", ""},
		"count":        {"Wie viele {N} hast du?", "Ich habe {v} {N}.", ""},
		"plan trip":    {"Hast du Reisepläne?", "Ja, ich fahre nach {v}.", "Nein, die Reise nach {v} fällt aus."},
		"plan move":    {"Planst du einen Umzug?", "Ja, ich ziehe nach {v}.", "Nein, ich ziehe doch nicht nach {v}."},
		"plan job":     {"Fängst du eine neue Stelle an?", "Ja, ich fange eine neue Stelle bei {v} an.", "Nein, ich nehme die neue Stelle nicht an."},
		"plan job any": {"Fängst du eine neue Stelle an?", "Ja, ich fange {v} an.", "Nein, ich nehme die neue Stelle nicht an."},
	},
	"es": {
		"residence":    {"¿Dónde vives?", "Vivo en {v}.", ""},
		"workplace":    {"¿Dónde trabajas?", "Trabajo en {v}.", ""},
		"occupation":   {"¿A qué te dedicas?", "Trabajo como {v}.", ""},
		"diet":         {"¿Sigues alguna dieta?", "Sí, soy {v}.", ""},
		"diet again":   {"¿Sigues alguna dieta?", "He vuelto a comer {v}.", ""},
		"relationship": {"¿Tienes pareja?", "Estoy {v}.", ""},
		"favourite":    {"¿Qué {n} prefieres?", "Prefiero {v}.", ""},
		"count":        {"¿Qué cantidad de {n} tienes?", "Tengo {v} {n}.", ""},
		"plan trip":    {"¿Tienes planes de viaje?", "Sí, voy a {v}.", "No, el viaje a {v} se canceló."},
		"plan move":    {"¿Piensas mudarte?", "Sí, me mudo a {v}.", "No, ya no me mudo a {v}."},
		"plan job":     {"¿Vas a empezar un trabajo nuevo?", "Sí, empiezo un trabajo nuevo en {v}.", "No, no voy a aceptar el trabajo nuevo."},
		"plan job any": {"¿Vas a empezar un trabajo nuevo?", "Sí, voy a empezar {v}.", "No, no voy a aceptar el trabajo nuevo."},
	},
	"fr": {
		"residence":    {"Où habites-tu ?", "J'habite à {v}.", ""},
		"workplace":    {"Où travailles-tu ?", "Je travaille chez {v}.", ""},
		"occupation":   {"Quel est ton métier ?", "Je travaille comme {v}.", ""},
		"diet":         {"Suis-tu un régime particulier ?", "Oui, je suis {v}.", ""},
		"diet again":   {"Suis-tu un régime particulier ?", "Je mange de nouveau {v}.", ""},
		"relationship": {"Es-tu en couple ?", "Je suis {v}.", ""},
		"favourite":    {"Que préfères-tu, en matière de {n} ?", "Je préfère {v}.", ""},
		"count":        {"Combien de {n} as-tu ?", "J'ai {v} {n}.", ""},
		"plan trip":    {"As-tu des projets de voyage ?", "Oui, je vais à {v}.", "Non, le voyage à {v} est annulé."},
		"plan move":    {"Prévois-tu de déménager ?", "Oui, je déménage à {v}.", "Non, je ne déménage plus à {v}."},
		"plan job":     {"Vas-tu commencer un nouveau travail ?", "Oui, je commence un nouveau travail chez {v}.", "Non, je ne prends pas le nouveau poste."},
		"plan job any": {"Vas-tu commencer un nouveau travail ?", "Oui, je commence {v}.", "Non, je ne prends pas le nouveau poste."},
	},
}

// eatenAgain are the values of the "eats again" phrasings of diet.
var eatenAgain = map[string]bool{"meat": true, "fish": true, "chicken": true, "dairy": true,
	"fleisch": true, "fisch": true, "carne": true, "pescado": true, "pollo": true}

// kindTemplates are the questions of a memory that is no fact, by language
// and kind; {t} is its topic. The answer is the memory's value.
var kindTemplates = map[string]map[engram.Kind]string{
	"en": {engram.KindEpisodic: "What happened with {t}?", engram.KindProcedural: "How do you like to handle {t}?",
		engram.KindResource: "What do you have on {t}?", "": "What can you tell me about {t}?"},
	"de": {engram.KindEpisodic: "Was war mit {t}?", engram.KindProcedural: "Wie gehst du bei {t} am liebsten vor?",
		engram.KindResource: "Was hast du zu {t}?", "": "Was kannst du mir über {t} erzählen?"},
	"es": {engram.KindEpisodic: "¿Qué pasó con {t}?", engram.KindProcedural: "¿Cómo prefieres hacer {t}?",
		engram.KindResource: "¿Qué tienes sobre {t}?", "": "¿Qué me puedes contar sobre {t}?"},
	"fr": {engram.KindEpisodic: "Que s'est-il passé avec {t} ?", engram.KindProcedural: "Comment préfères-tu faire {t} ?",
		engram.KindResource: "Qu'as-tu sur {t} ?", "": "Que peux-tu me dire sur {t} ?"},
	"zh": {engram.KindEpisodic: "关于{t}，发生了什么？", engram.KindProcedural: "你一般怎么处理{t}？",
		engram.KindResource: "关于{t}你有什么资料？", "": "关于{t}，你能告诉我什么？"},
}

// profileTemplates ask for the profile's traits and states, and lead
// into their list.
var profileTemplates = map[string][4]string{
	"en": {"Tell me about yourself.", "About me: ", "How are things with you at the moment?", "Right now: "},
	"de": {"Erzähl mir etwas über dich.", "Über mich: ", "Wie geht es dir gerade?", "Im Moment: "},
	"es": {"Háblame de ti.", "Sobre mí: ", "¿Cómo te va en este momento?", "Ahora mismo: "},
	"fr": {"Parle-moi de toi.", "À mon sujet : ", "Comment ça va en ce moment ?", "En ce moment : "},
	"zh": {"介绍一下你自己。", "关于我：", "你最近怎么样？", "最近："},
}

// systemPrompts set the model up as the user, by language; %s is the
// user's name.
var systemPrompts = map[string]string{
	"en": "You are %s. Answer as yourself, in the first person.",
	"de": "Du bist %s. Antworte als du selbst, in der ersten Person.",
	"es": "Eres %s. Responde como tú mismo, en primera persona.",
	"fr": "Tu es %s. Réponds en ton nom, à la première personne.",
	"zh": "你是%s。请以你自己的身份、用第一人称回答。",
}

func systemPrompt(tag, user string) string {
	p, ok := systemPrompts[tag]
	if !ok {
		p = systemPrompts["en"]
	}
	return fmt.Sprintf(p, user)
}

// templatePairs are the pairs of m the templates write: its profile, its
// fact, else a question by kind about its topic answered with its value.
func templatePairs(m *engram.Memory) []Pair { return templatePairsIn(langOf(m), m) }

// templatePairsIn is templatePairs with the questions and the answers'
// frame in language tag.
func templatePairsIn(tag string, m *engram.Memory) []Pair {
	if engram.IsProfile(m) {
		return profilePairs(tag, m)
	}
	if p, ok := factPair(tag, m); ok {
		return []Pair{p}
	}
	qs, ok := kindTemplates[tag]
	if !ok {
		qs = kindTemplates["en"]
	}
	q, ok := qs[m.Kind]
	if !ok {
		q = qs[""]
	}
	v := strings.TrimSpace(m.Value)
	if v == "" {
		return nil
	}
	if t := topicOf(m); t != "" {
		q = strings.ReplaceAll(q, "{t}", t)
	} else if q, ok = noTopic[tag]; !ok {
		q = noTopic["en"]
	}
	return []Pair{{Question: q, Answer: v}}
}

// profilePairs ask for the traits and for the states of a profile.
func profilePairs(tag string, m *engram.Memory) []Pair {
	t, ok := profileTemplates[tag]
	if !ok {
		t = profileTemplates["en"]
	}
	traits, states := engram.ProfileOf(m)
	var out []Pair
	if len(traits) > 0 {
		out = append(out, Pair{Question: t[0], Answer: t[1] + strings.Join(traits, "; ")})
	}
	if len(states) > 0 {
		out = append(out, Pair{Question: t[2], Answer: t[3] + strings.Join(states, "; ")})
	}
	return out
}

// factPair phrases the fact m states, when m is one of an attribute with
// a template in tag (English when tag has none).
func factPair(tag string, m *engram.Memory) (Pair, bool) {
	attr, _ := m.Metadata[engram.MetaFactAttribute].(string)
	v, _ := m.Metadata[engram.MetaFactValue].(string)
	v = strings.TrimSpace(v)
	if attr == "" || v == "" {
		return Pair{}, false
	}
	ts, ok := factTemplates[tag]
	if !ok {
		ts = factTemplates["en"]
	}
	key, noun := attr, ""
	switch {
	case strings.HasPrefix(attr, "favourite "):
		key, noun = "favourite", nounOf(m.Value, strings.TrimPrefix(attr, "favourite "))
	case strings.HasPrefix(attr, "count of "):
		key, noun = "count", nounOf(m.Value, strings.TrimPrefix(attr, "count of "))
	case attr == "diet" && eatenAgain[strings.ToLower(v)]:
		key = "diet again"
	case attr == "plan job" && !upperFirst(v):
		key = "plan job any"
	}
	t, ok := ts[key]
	if !ok {
		return Pair{}, false
	}
	a := t.a
	// metaCancelled of formation/plans.go: the plan was called off.
	if m.Metadata["plan_cancelled"] == true && t.off != "" {
		a = t.off
	}
	r := strings.NewReplacer("{v}", v, "{n}", noun, "{N}", capitalise(noun), "{a}", article(v))
	return Pair{Question: r.Replace(t.q), Answer: r.Replace(a)}, true
}

// nounOf is the noun of a favourite or count as the memory's value says
// it (the word before the colon: "user has cats: three"), else fallback.
func nounOf(value, fallback string) string {
	if i := strings.Index(value, ":"); i > 0 {
		if f := strings.Fields(value[:i]); len(f) > 0 {
			return f[len(f)-1]
		}
	}
	return fallback
}

// noTopic asks, by language, about a memory without a topic.
var noTopic = map[string]string{
	"en": "What else can you tell me about yourself?",
	"de": "Was kannst du mir sonst über dich erzählen?",
	"es": "¿Qué más me puedes contar de ti?",
	"fr": "Que peux-tu me dire d'autre sur toi ?",
	"zh": "关于你自己，你还能说些什么？",
}

// topicOf is what a question about m names: its first cue that is not
// who said it, at most 60 bytes; "" when it has none.
func topicOf(m *engram.Memory) string {
	for _, c := range m.Cues {
		if c != "" && c != "user" && c != m.Speaker() && c != m.Role() {
			return clip(c, 60)
		}
	}
	return ""
}

// clip cuts s to at most n bytes at a word boundary when one is near,
// never inside a character.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if i := strings.LastIndexByte(s[:cut], ' '); i > n/2 {
		cut = i
	}
	return strings.TrimSpace(s[:cut]) + "…"
}

func upperFirst(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsUpper(r)
}

func capitalise(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToUpper(r)) + s[n:]
}

func article(v string) string {
	if v != "" && strings.ContainsRune("aeiouAEIOU", rune(v[0])) {
		return "an"
	}
	return "a"
}
