package abort

// builtin is the built-in phrase list, already in Normalize form (a test
// checks). A phrase belongs here only if, as a whole message sent while the
// agent works, it can hardly mean anything but "stop". Words that are also
// common answers ("no", "enough", "hold on", "never mind") are left out;
// operators can add them with Config.Add.
var builtin = []string{
	// Commands and keys.
	"/stop", "esc", "ctrl+c", "ctrl-c", "ctrl c", "^c",

	// English.
	"stop", "stop it", "stop now", "stop that", "stop this",
	"stop right now", "stop right there", "stop everything",
	"stop the agent", "stop agent", "stop the bot", "stop generating",
	"stop working", "stop stop", "stop please", "please stop", "pls stop",
	"plz stop", "stop pls", "stop plz",
	"abort", "abort it", "abort now", "abort please", "please abort",
	"cancel", "cancel it", "cancel that", "cancel now", "cancel please",
	"please cancel",
	"halt", "interrupt", "exit", "quit",
	"wait", // policy: a bare "wait" is handled like "stop"

	// Spanish.
	"detente", "detén", "deten", "detenlo", "detén eso", "deten eso",
	"para", "para ya", "basta", "ya basta", "cancela", "cancelar",
	"por favor para", "para por favor",

	// French.
	"arrête", "arrete", "arrêtez", "arretez", "arrête ça", "arrete ca",
	"arrête-toi", "arrete-toi", "annule", "annuler",

	// German.
	"stopp", "anhalten", "aufhören", "aufhoren", "aufhoeren", "hör auf",
	"hor auf", "hoer auf", "abbrechen", "bitte stopp", "stopp bitte",

	// Russian.
	"стоп", "остановись", "остановитесь", "прекрати", "прекратите",
	"хватит", "отмена",

	// Chinese (simplified and traditional).
	"停", "停止", "停下", "停下来", "停下來", "暂停", "暫停", "取消",

	// Japanese.
	"やめて", "止めて", "やめろ", "止めろ", "ストップ", "中止",

	// Hindi.
	"रुको", "रुकिए", "रुक जाओ", "रोको", "बंद करो",

	// Arabic.
	"توقف", "أوقف", "اوقف", "قف", "إلغاء", "الغاء",
}

// BuiltinPhrases returns the built-in stop phrases, in Normalize form. The
// result is a new slice the caller may modify. It does no I/O.
func BuiltinPhrases() []string {
	out := make([]string, len(builtin))
	copy(out, builtin)
	return out
}
