package lang

import (
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/dutch"
	"github.com/blevesearch/snowballstem/english"
	"github.com/blevesearch/snowballstem/french"
	"github.com/blevesearch/snowballstem/german"
	"github.com/blevesearch/snowballstem/italian"
	"github.com/blevesearch/snowballstem/portuguese"
	"github.com/blevesearch/snowballstem/spanish"
)

// stopWords are, per language, the function words dropped from queries:
// they occur in almost every memory, so they only add cost and noise to an
// OR-query (each matching row is scored, so a term in half the corpus makes
// a search score half the corpus). Lower-case.
var stopWords = map[string]map[string]bool{
	English: setOf(`a about after all also am an and any are as at be because been
		before being but by can could did do does doing done for from had has have having he her here
		hers him his how i if in into is it its just me more most my no nor not now of off on once only
		or other our ours out over own same she should so some such than that the their theirs them then
		there these they this those through to too under until up very was we were what when where which
		while who whom why will with would you your yours
		s t d ll m re ve`), // what tokenising "Ana's", "don't", "we'll" leaves behind
	German: setOf(`aber alle allem allen aller alles als also am an ans auch auf aus bei beim bin bis bist
		da damit dann das dass dein deine deinem deinen deiner dem den denn der des dessen dich die dies
		diese diesem diesen dieser dieses dir doch dort du durch ein eine einem einen einer eines er es
		etwas euch euer eure für gegen gewesen hab habe haben hast hat hatte hatten hier hin ich ihm ihn
		ihnen ihr ihre ihrem ihren ihrer im in ins ist ja jetzt kann kein keine können man mein meine
		meinem meinen meiner mich mir mit nach nicht noch nun nur ob oder ohne schon sehr sein seine
		seinem seinen seiner seit sich sie sind so über um und uns unser unsere unter vom von vor war
		waren warst was weil wenn wer werde werden wie wieder wir wird wo wurde zu zum zur zwar
		wann warum welche welchem welchen welcher welches`),
	Spanish: setOf(`a al algo algunos ante antes como con contra cual cuando de del desde donde durante
		e el ella ellas ellos en entre era eran es esa esas ese eso esos esta estaba estaban estar este
		esto estos estoy estás está fue fueron fui ha había han has hasta hay he la las le les lo los
		me mi mis mucho muy más nada ni no nos nosotros o os otra otro para pero poco por porque que
		quien se sea ser si sin sobre son su sus también te tenía tengo ti tiene tu tus tú un una uno
		unos y ya yo qué cómo cuándo dónde quién quiénes cuál cuáles cuánto cuánta cuántos cuántas sí él`),
	French: setOf(`a à ai aie as au aux avait avec avez avons c ce ceci cela ces cet cette d dans de des du
		elle elles en es est et été était étaient être eu eux il ils j je l la le les leur leurs lui m ma
		mais me même mes moi mon n ne ni nos notre nous on ont ou où par pas pour qu que quel quelle quels
		quelles qui s sa sans se ses si son sont sur t ta te tes toi ton tu un une vos votre vous y
		quand comment quoi pourquoi combien ça suis sommes êtes fut avais`),
	Italian: setOf(`a ad al alla alle allo agli ai anche avere c che chi ci coi col come con cosa da dal
		dalla dai degli dei del della delle dello di dove e è ed era erano gli ha hai hanno ho i il in io
		l la le lei li lo loro lui ma mi mia mie miei mio ne negli nei nel nella noi non o per perché più
		quale quando quanto quella quelle quelli quello questa queste questi questo se si sia siamo sono
		su sua sue sui sul sulla suo suoi ti tra tu tua tuo un una uno vi voi`),
	Portuguese: setOf(`a à ao aos as às com como da das de dela dele do dos e é ela elas ele eles em
		entre era eram essa esse esta está estão este eu foi foram há isso isto já lhe mais mas me meu
		minha muito na nas nem no nos não o onde os ou para pela pelo por qual quando que quem se sem
		ser seu sua são também te tem tinha um uma você vocês`),
	Dutch: setOf(`aan al als bij dan dat de der deze die dit doch doen door dus een en er had heb hebben
		heeft het hier hij hoe hun ik in is je jij kan kon maar me meer men met mij mijn na naar niet
		niets nog nu of om omdat ons onze ook op over te tot u uit van veel voor want was wat we wel
		werd wie wij wil worden zal ze zich zij zijn zo zonder wanneer waar welke`),
}

func setOf(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range splitSpace(words) {
		m[w] = true
	}
	return m
}

// IsStopWord reports whether the lower-case word w is a stop word of
// language tag. The English list serves "" and every language without a
// list of its own.
func IsStopWord(tag, w string) bool {
	sw, ok := stopWords[tag]
	if !ok {
		sw = stopWords[English]
	}
	return sw[w]
}

var stemmers = map[string]func(*snowballstem.Env) bool{
	English:    english.Stem,
	German:     german.Stem,
	Spanish:    spanish.Stem,
	French:     french.Stem,
	Italian:    italian.Stem,
	Portuguese: portuguese.Stem,
	Dutch:      dutch.Stem,
}

// Stem returns the Snowball stem of the lower-case word w in language tag
// ("hunden" → "hund" in German). A language without a stemmer, "" among
// them, leaves w unchanged.
func Stem(tag, w string) string {
	f, ok := stemmers[tag]
	if !ok || w == "" {
		return w
	}
	env := snowballstem.NewEnv(w)
	f(env)
	return env.Current()
}
