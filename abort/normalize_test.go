package abort

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"plain", "stop", "stop"},
		{"upper", "STOP", "stop"},
		{"title and full stop", "Stop.", "stop"},
		{"repeated bangs", "stop!!!", "stop"},
		{"mixed trailing", "stop?!…", "stop"},
		{"ellipsis then space", "stop … ", "stop"},
		{"outer spaces", "   stop \n", "stop"},
		{"inner spaces", "stop \t\t now", "stop now"},
		{"no-break spaces", "\u00a0stop\u00a0\u00a0now\u202f", "stop now"},
		{"ideographic space", "\u3000停止\u3000", "停止"},
		{"zero width", "st\u200bop\ufeff", "stop"},
		{"curly double quotes", "“stop”", "stop"},
		{"curly single quotes", "‘stop’", "stop"},
		{"straight quotes", `"stop"`, "stop"},
		{"quote then bang", `"stop"!`, "stop"},
		{"bang inside quotes", `"stop!"`, "stop"},
		{"guillemets", "« arrête ! »", "arrête"},
		{"corner brackets", "「やめて」", "やめて"},
		{"inner curly apostrophe", "don’t stop", "don't stop"},
		{"backticks", "`stop`", "stop"},
		{"emphasis", "**stop**", "stop"},
		{"inverted marks", "¡para!", "para"},
		{"inverted question", "¿basta?", "basta"},
		{"full-width letters", "ＳＴＯＰ", "stop"},
		{"full-width bang", "やめて！！", "やめて"},
		{"ideographic full stop", "停止。", "停止"},
		{"full-width question", "停下来？", "停下来"},
		{"devanagari danda", "रुको।", "रुको"},
		{"arabic question mark", "توقف؟", "توقف"},
		{"arabic comma", "توقف،", "توقف"},
		{"arabic marks", "تَوَقَّفْ", "توقف"},
		{"arabic tatweel", "تـوقف", "توقف"},
		{"semicolon", "stop;", "stop"},
		{"comma inside", "stop, please", "stop please"},
		{"cyrillic upper", "СТОП!", "стоп"},
		{"german sharp s kept", "STRAßE", "straße"},
		{"long s", "ſtop", "stop"},
		{"final sigma", "ΣΤΟΠΟΣ", "στοποσ"},
		{"dotted capital i", "İ", "i"},
		{"decomposed accent", "dete\u0301n", "detén"},
		{"discord mention", "<@123456789> stop", "stop"},
		{"discord nick mention", "<@!123456789>stop", "stop"},
		{"slack mention", "<@U123ABC> STOP", "stop"},
		{"slack mention with name", "<@U123ABC|gateway>: stop", "stop"},
		{"mention comma", "<@123>, stop", "stop"},
		{"mention colon", "<@123>: stop!", "stop"},
		{"two mentions", "<@1> <@2> stop", "stop"},
		{"quoted mention", `"<@1> stop"`, "stop"},
		{"mention keeps slash", "<@1> /stop", "/stop"},
		{"mention only", "<@1>", ""},
		{"not a mention", "<@> stop", "<@> stop"},
		{"unclosed mention", "<@123 stop", "<@123 stop"},
		{"mention later", "stop <@1>", "stop <@1>"},
		{"plain at-name kept", "@bot stop", "@bot stop"},
		{"command", "/stop", "/stop"},
		{"invalid utf-8", "stop\xff", "stop\ufffd"},
		{"only punctuation", "!!! ... ???", ""},
		{"sentence", "Don't stop, keep going.", "don't stop keep going"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Normalize(tc.in); got != tc.want {
				t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// idempotenceCorpus holds inputs that stress the interplay of Normalize's
// steps; the fuzz target starts from it too.
var idempotenceCorpus = []string{
	"", " ", "stop", "STOP!!!", "“ stop ”", "<@1>, «stop»", "\u00a0\u00a0",
	"ſ", "ς", "İstanbul", "ǅ", "ﬀ", "℡", "㍿", "ﷺ", "ﱞ", "\u0308", " \u0308",
	"e\u200b\u0301", "<@1>\u0301", "a\u00a8", "\u1100\u1161", "\ufb50",
	"((stop))", "¿¡stop!?", "*_~stop~_*", "<@u1|x y>z", "<@1>'\"<@2>stop",
	"\xff\xfe", "stop\x00", "ＳＴＯＰ！", "ͅ", "\u0345\u0399", "ΐ", "ﬓ",
}

func TestNormalizeIdempotent(t *testing.T) {
	for _, s := range idempotenceCorpus {
		once := Normalize(s)
		if twice := Normalize(once); twice != once {
			t.Errorf("Normalize(%q) = %q, but Normalize of that = %q", s, once, twice)
		}
		if !utf8.ValidString(once) {
			t.Errorf("Normalize(%q) = %q, not valid UTF-8", s, once)
		}
	}
}

// TestNormalizeEveryRune checks idempotence for every rune alone and after
// a letter, where composition and folding interact most.
func TestNormalizeEveryRune(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		for _, s := range []string{string(r), "a" + string(r), string(r) + "\u0301"} {
			once := Normalize(s)
			if twice := Normalize(once); twice != once {
				t.Errorf("Normalize(%q) = %q, but Normalize of that = %q", s, once, twice)
			}
		}
	}
}

func TestFoldIdempotent(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if f := fold(r); fold(f) != f {
			t.Errorf("fold(%U) = %U, but fold of that = %U", r, f, fold(f))
		}
	}
}

func FuzzNormalize(f *testing.F) {
	for _, s := range idempotenceCorpus {
		f.Add(s)
	}
	for _, s := range builtin {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Normalize(s)
		if twice := Normalize(once); twice != once {
			t.Errorf("Normalize(%q) = %q, but Normalize of that = %q", s, once, twice)
		}
		if !utf8.ValidString(once) {
			t.Errorf("Normalize(%q) = %q, not valid UTF-8", s, once)
		}
	})
}
