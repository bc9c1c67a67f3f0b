package lang

import "regexp"

// The tense markers of each language (see tenseMarkers): the auxiliaries,
// modals and endings of the future and of plans, the past's auxiliaries,
// endings and common irregular forms, and the present's copulas, "have"
// and subject-verb pairs. They read grammar, not topics: no list names an
// appointment or a trip.

// wordsRe compiles a case-insensitive alternation that must stand between
// non-letters (regexp's \b does not see accented letters as word
// characters).
func wordsRe(alternation string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)(?:^|[^\p{L}\d])(?:` + alternation + `)(?:[^\p{L}\d]|$)`)
}

// enWords compiles a case-insensitive alternation of ASCII words.
func enWords(alternation string) *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(?:` + alternation + `)\b`)
}

var enTense = &tenseMarkers{
	future: enWords(`will|won't|wont|shall|'ll|’ll|going to|gonna|plan to|plans to|planning|intend to|intends to|` +
		`about to|hope to|hoping to|want to|wants to|would like to|'d like to|’d like to|supposed to|scheduled|due|upcoming|` +
		`next|coming up|soon|tomorrow|tonight|looking forward|can't wait|cannot wait|until|till`),
	past: enWords(`was|were|wasn't|weren't|did|didn't|had|hadn't|been|ago|yesterday|last|used to|went|came|saw|met|got|made|` +
		`took|gave|said|told|found|left|felt|thought|bought|brought|caught|taught|ran|ate|drank|wrote|sat|stood|spent|` +
		`sent|lost|won|paid|kept|slept|began|drove|flew|swam|sang|rode|broke|chose|forgot|knew|grew|threw|heard|held|` +
		`became|fell|fought|hid|led|meant|rang|rose|shook|spoke|stole|tore|understood|woke|wore|gone|seen|done|taken|` +
		`given|eaten|written|spoken|driven|flown|known|begun|chosen|forgotten|fallen|[a-z]{2,}ed`),
	// An "-ed" adjective after "be" or "feel" ("I'm excited about
	// Friday"), and words that merely end in "ed".
	notPast: regexp.MustCompile(`(?i)\b(?:am|is|are|'m|’m|'re|’re|be|being|feel|feels|feeling)\s+(?:so |very |really |too |super |quite |all )?([a-z]+ed)\b|` +
		`\b(bed|red|shed|seed|feed|speed|need|indeed|weed|bleed|breed|proceed|succeed|exceed|embed|hundred|sacred|naked|wicked|sled|greed|deed|heed|creed)\b`),
	present: regexp.MustCompile(`(?i)\b(?:am|is|are|'m|’m|'re|’re|have|has|do|does|can|must|need|needs|it's|that's|there's)\b|` +
		`\b(?:I|we|you|they|he|she|it)\s+(?:also |still |just |really |usually |only )?[a-z]+\b|` +
		`\b(?:my|our|the|his|her|their|your)(?:\s+[a-z'’]+){1,2}\s+[a-z]+s\b`),
	changeVerb: enWords(`move|moved|moves|moving|reschedul\w*|postpon\w*|push|pushed|pushes|pushing|change|changed|changes|` +
		`shift|shifted|shifts|delay|delayed|delays|bump|bumped|put off|brought forward|moved up|switched|switch`),
	changeTo: regexp.MustCompile(`(?i)\b(?:to|until|till|for)\s+(?:the\s+)?$`),
}

var deTense = &tenseMarkers{
	future: wordsRe(`werde|wirst|wird|werden|werdet|will|wollen|willst|möchte|möchten|plane|planen|plant|habe vor|haben vor|` +
		`hast vor|vorhaben|nächst\p{L}*|kommend\p{L}*|bald|morgen|übermorgen|freue mich|freuen uns|soll|sollen|bis`),
	past: regexp.MustCompile(`(?:^|[^\p{L}])(?:(?i:war|waren|warst|wart|hatte|hatten|hattest|wurde|wurden|gestern|vorgestern|` +
		`letzt\p{L}*|vorig\p{L}*|vergangen\p{L}*|ging|gingen|kam|kamen|sah|sahen|traf|trafen|fuhr|fuhren|flog|flogen|` +
		`lief|liefen|aß|aßen|trank|tranken|gab|gaben|nahm|nahmen|fand|fanden|blieb|blieben|schrieb|sprach|rief|bekam|` +
		`dachte|brachte|wusste|konnte|konnten|musste|mussten|wollte|wollten|sollte|sollten|gewesen)|` +
		// A past participle, in lower case: "besucht", "gegangen",
		// "eingeladen"; a simple past after its subject: "ich machte".
		`(?:ab|an|auf|aus|bei|ein|mit|nach|vor|weg|zu|zurück|los|um|fest|her|hin)?ge\p{Ll}{2,}(?:t|en)|` +
		`(?i:ich|er|sie|es|wir|man) \p{Ll}{2,}te[nt]?)(?:[^\p{L}]|$)|` +
		// The perfect: a form of "haben" or "sein" and, at the end of the
		// sentence, its participle in lower case ("habe … besucht").
		`(?i:habe|hast|hat|haben|habt|bin|bist|ist|sind|seid)\s(?:.*\s)?(\p{Ll}+(?:t|en))\s*$`),
	notPast: regexp.MustCompile(`(?:^|[^\p{L}])(gegen|genug|genau|gerne|gern|gehen|geht|geben|genießen|gewinnen|gelten|gesund|` +
		`gemeinsam|gefällt|gehört|gehören|gestalten|gewöhnt)(?:[^\p{L}]|$)`),
	present: wordsRe(`habe|hast|hat|haben|habt|bin|bist|ist|sind|seid|gibt|(?:ich|wir|du|er|sie|es|man) \p{L}+`),
	changeVerb: wordsRe(`verschob\p{L}*|verschieb\p{L}*|verleg\p{L}*|vorverleg\p{L}*|vorgezogen|vorziehen|zieh\p{L}* vor|` +
		`geändert|änder\p{L}*|umgelegt|umgebucht|umbuch\p{L}*`),
	changeTo: regexp.MustCompile(`(?i)(?:^|[^\p{L}])(?:auf|zu|nach|bis)\s+(?:den\s+)?$`),
}

var esTense = &tenseMarkers{
	future: wordsRe(`voy a|vas a|va a|vamos a|vais a|van a|pienso|piensa|planeo|planea|planeamos|quiero|quiere|queremos|` +
		`espero|tengo que|tiene que|hay que|debo|próxim[oa]s?|proxim[oa]s?|que viene|mañana|pronto|hasta|` +
		`\p{L}+(?:aré|eré|iré|ará|erá|irá|arás|erás|irás|aremos|eremos|iremos|arán|erán|irán)|` +
		`tendré|tendrá|tendremos|tendrán|podré|podrá|saldré|saldrá|haré|hará|haremos|diré|dirá|vendré|vendrá|` +
		`pondré|sabré|habrá|habré|seré|será|seremos|serán|iré|irá|iremos|irán`),
	past: wordsRe(`ayer|anoche|anteayer|hace|pasad[oa]|fue|fui|fuimos|fueron|fuiste|estuve|estuvo|estuvimos|estuvieron|` +
		`tuve|tuvo|tuvimos|tuvieron|hice|hizo|hicimos|hicieron|vi|vio|vimos|vieron|dije|dijo|pude|pudo|puse|puso|` +
		`vine|quise|supe|traje|di|dio|era|eras|éramos|eran|había|habían|tenía|tenían|estaba|estaban|iba|íbamos|iban|` +
		`\p{L}{2,}(?:aron|ieron|aste|iste|asteis|isteis|aba|abas|ábamos|aban)|\p{L}{2,}(?:é|ó)|` +
		`(?:he|has|ha|hemos|habéis|han)\s+\p{L}+(?:ado|ada|ido|ida|to|cho|sto)`),
	notPast: regexp.MustCompile(`(?i)(?:^|[^\p{L}])(café|bebé|puré|josé|qué|sé|té|comité|porqué|bidé|carné|cliché|dominó|buró|` +
		`acaba|acabas|existe|triste|chiste|insiste|consiste|resiste|persiste|asiste|contraste)(?:[^\p{L}]|$)`),
	present: wordsRe(`tengo|tiene|tienes|tenemos|tienen|es|son|soy|somos|está|están|estoy|estamos|hay|voy|vas|va|vamos|van|` +
		`empieza|empiezo|empiezan|comienza|comienzo|sale|salgo|salimos|llega|llego|toca|(?:me|te|se|nos|os) \p{L}+`),
	changeVerb: wordsRe(`cambi\p{L}*|mov\p{L}*|pas(?:ó|aron|ado|ada|amos)|aplaz\p{L}*|pospus\p{L}*|pospuest[oa]|pospon\p{L}*|` +
		`adelant\p{L}*|traslad\p{L}*|reprogram\p{L}*|retras\p{L}*|atras\p{L}*`),
	changeTo: regexp.MustCompile(`(?i)(?:^|[^\p{L}])(?:a|al|para|hasta)\s+(?:el\s+)?$`),
}

var frTense = &tenseMarkers{
	future: wordsRe(`vais|vas|va|allons|allez|vont|compte|comptons|prévois|prévoyons|prévu|prévue|veux|voulons|voudrais|` +
		`espère|espérons|dois|devons|prochain|prochaine|demain|bientôt|jusqu'à|jusqu’à|` +
		`\p{L}{2,}(?:rai|rons|ront|rez)|\p{L}{3,}(?:era|ira)|sera|aura|fera|pourra|viendra|faudra`),
	past: wordsRe(`hier|avant-hier|dernier|dernière|était|étais|étions|étaient|avait|avais|avions|avaient|allais|allait|` +
		`faisais|faisait|fus|fut|\p{L}{3,}aient|` +
		`(?:ai|as|a|avons|avez|ont|suis|es|est|sommes|êtes|sont)\s+(?:\p{L}+\s+)?\p{L}+(?:é|ée|és|ées|i|ie|is|it|u|ue|us|ert|erte)`),
	present: wordsRe(`ai|as|a|avons|avez|ont|suis|es|est|sommes|êtes|sont|(?:je|j'|j’|tu|il|elle|on|nous|vous|ils|elles)\s*\p{L}+`),
	changeVerb: wordsRe(`déplac\p{L}*|report\p{L}*|décal\p{L}*|avanc\p{L}*|repouss\p{L}*|chang\p{L}*|reprogramm\p{L}*|` +
		`remis\p{L}*|remettre|bascul\p{L}*`),
	changeTo: regexp.MustCompile(`(?i)(?:^|[^\p{L}])(?:à|a|au|pour|jusqu'à|jusqu’à)\s*$`),
}

// cjkTense serves Chinese and Japanese: 了 and 过 mark what happened, 会,
// 要 and 打算 what will; ます and た the same in Japanese.
var cjkTense = &tenseMarkers{
	future: regexp.MustCompile(`将|会|會|要|打算|准备|準備|计划|計劃|想|下周|下週|下个|下個|明天|后天|後天|即将|快要|预约|預約|` +
		`予定|つもり|来週|来月|明日|あした|ます`),
	past: regexp.MustCompile(`了|过|過|昨天|前天|上周|上週|上个|上個|已经|已經|刚才|剛才|刚刚|剛剛|之前|去年|` +
		`ました|でした|かった|った|んだ|昨日|先週|先月`),
	present:    regexp.MustCompile(`有|是|在|です|ある|いる`),
	changeVerb: regexp.MustCompile(`改|推迟|推遲|延|提前|挪|换|換|调|調|移`),
	changeTo: regexp.MustCompile(`(?:改到|改成|改为|改為|改在|推迟到|推遲到|推到|延期到|延到|延后到|延後到|提前到|挪到|换到|換到|` +
		`调到|調到|调整到|調整到|移到)了?$`),
}
