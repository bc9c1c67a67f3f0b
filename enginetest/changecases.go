package enginetest

// changeCases are the conversations of testChanges, one per language.
var changeCases = []change{
	{lang: "en",
		sittings: [3][]string{
			{"Hi! Good to be back.", "My favourite drink is black coffee.", "I work as a teacher at Lincoln High.", "I live in Munich."},
			{"I stopped drinking coffee last week; now I only drink green tea.", "I quit teaching and started a new job as a software engineer at Siemens."},
			{"I live in Schwabing now, a district of Munich.", "The commute is much shorter."},
		},
		others: []string{"My brother stopped drinking coffee.", "If I quit coffee, I'll be tired all day.", "Did you quit your job?"},
		facts: []changedFact{{"drink", "green tea", "", ""}, {"favourite drink", "", "black coffee", ""},
			{"occupation", "software engineer", "teacher", ""}, {"workplace", "Siemens", "Lincoln High", ""}, {"residence", "Schwabing Munich", "Munich", ""}},
		asks: []changeAsk{{"What does Bob drink?", "green tea"}, {"Where does Bob work?", "Siemens"}, {"Where does Bob live?", "Schwabing"}},
	},
	{lang: "de",
		sittings: [3][]string{
			{"Hallo, da bin ich wieder.", "Mein Lieblingsgetränk ist schwarzer Kaffee.", "Ich arbeite als Lehrer bei Montessori.", "Ich wohne in München.", "Am liebsten bin ich in Schwabing, mitten in München."},
			{"Ich habe letzte Woche aufgehört, Kaffee zu trinken; jetzt trinke ich nur noch grünen Tee.", "Ich arbeite jetzt als Softwareentwickler bei Siemens."},
			// The conversation related Schwabing to München before: a refinement.
			{"Ich wohne jetzt in Schwabing.", "Der Weg zur Arbeit ist viel kürzer."},
		},
		others: []string{"Mein Bruder trinkt keinen Kaffee mehr.", "Wenn ich keinen Kaffee mehr trinke, bin ich müde.", "Trinkst du keinen Kaffee mehr?"},
		facts: []changedFact{{"drink", "grünen Tee", "", ""}, {"favourite getrank", "", "schwarzer Kaffee", ""},
			{"occupation", "Softwareentwickler", "Lehrer", ""}, {"workplace", "Siemens", "Montessori", ""}, {"residence", "Schwabing München", "München", ""}},
		asks: []changeAsk{{"Was trinkt Bob?", "grünen Tee"}, {"Wo arbeitet Bob?", "Siemens"}, {"Wo wohnt Bob?", "Schwabing"}},
	},
	{lang: "de-bare",
		sittings: [3][]string{
			{"Hallo!", "Ich wohne in München."},
			{"Ich trinke schwarzen Kaffee.", "Ich habe Urlaub."},
			// Nothing relates Schwabing to München: a new home replaces the
			// held one, as "I live in Madrid now" after Berlin does.
			{"Ich wohne jetzt in Schwabing.", "Es ist ruhig hier."},
		},
		others: []string{"Mein Bruder wohnt nicht mehr in München.", "Falls ich nicht mehr in München wohne, sage ich es dir."},
		facts:  []changedFact{{"residence", "Schwabing", "München", ""}},
		asks:   []changeAsk{{"Wo wohnt Bob?", "Schwabing"}},
	},
	{lang: "es",
		sittings: [3][]string{
			{"¡Hola de nuevo!", "Mi bebida favorita es el café solo.", "Trabajo como profesor en Cervantes.", "Vivo en Madrid."},
			{"Dejé de tomar café la semana pasada; ahora solo bebo té verde.", "Ahora trabajo como ingeniero de software en Telefónica."},
			{"Ahora vivo en Chamberí, en Madrid.", "El trayecto es mucho más corto."},
		},
		others: []string{"Mi hermano ya no toma café.", "Si dejo de tomar café, estaré cansado.", "¿Ya no tomas café?"},
		facts: []changedFact{{"drink", "té verde", "", ""}, {"favourite beb", "", "café solo", ""},
			{"occupation", "ingeniero de software", "profesor", ""}, {"workplace", "Telefónica", "Cervantes", ""}, {"residence", "Chamberí Madrid", "Madrid", ""}},
		asks: []changeAsk{{"¿Qué bebe Bob?", "té verde"}, {"¿Dónde trabaja Bob?", "Telefónica"}, {"¿Dónde vive Bob?", "Chamberí"}},
	},
	{lang: "fr",
		sittings: [3][]string{
			{"Bonjour, me revoilà.", "Je bois du café noir tous les matins.", "Je travaille comme professeur chez Hachette.", "J'habite à Lyon."},
			{"J'ai arrêté de boire du café la semaine dernière ; maintenant je ne bois que du thé vert.", "Je travaille maintenant comme ingénieur chez Airbus."},
			{"J'habite maintenant à Vaise, un quartier de Lyon.", "Le trajet est bien plus court."},
		},
		others: []string{"Mon frère ne boit plus de café.", "Si j'arrête le café, je serai fatigué.", "Tu ne bois plus de café ?"},
		facts: []changedFact{{"drink", "thé vert", "café noir", ""},
			{"occupation", "ingénieur", "professeur", ""}, {"workplace", "Airbus", "Hachette", ""}, {"residence", "Vaise Lyon", "Lyon", ""}},
		asks: []changeAsk{{"Que boit Bob ?", "thé vert"}, {"Où travaille Bob ?", "Airbus"}, {"Où habite Bob ?", "Vaise"}},
	},
	{lang: "zh",
		sittings: [3][]string{
			{"你好，我又来了。", "我最喜欢的饮料是黑咖啡。", "我在学校当老师。", "我住在北京。"},
			{"我不再喝咖啡了，现在只喝绿茶。", "我辞去了老师的工作，现在在西门子当软件工程师。"},
			{"我现在住在朝阳区。", "上班的路近多了。"},
		},
		others: []string{"他不再喝咖啡了。", "如果我不再喝咖啡，我会很累。", "你戒了咖啡吗？"},
		facts: []changedFact{{"drink", "绿茶", "", ""}, {"favourite 饮料", "", "黑咖啡", ""},
			{"occupation", "软件工程师", "老师", ""}, {"workplace", "西门子", "学校", ""}, {"residence", "朝阳区 北京", "北京", ""}},
		asks: []changeAsk{{"Bob喝什么？", "绿茶"}, {"Bob在哪里工作？", "西门子"}, {"Bob住在哪里？", "朝阳区"}},
	},
}
