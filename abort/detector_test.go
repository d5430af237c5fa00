package abort

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestIsStop(t *testing.T) {
	d := New(DefaultConfig(), "gateway", "@Claude Bot")
	tests := []struct {
		name string
		in   string
		want bool
	}{
		// English stops.
		{"stop", "stop", true},
		{"upper", "STOP", true},
		{"title full stop", "Stop.", true},
		{"bangs", "stop!!!", true},
		{"spaces", "   stop   ", true},
		{"newlines", "\nstop\n", true},
		{"curly quotes", "“stop”", true},
		{"straight quotes bang", `"STOP"!`, true},
		{"stop it", "Stop it!", true},
		{"stop now", "stop   NOW", true},
		{"please stop", "please stop", true},
		{"stop please comma", "stop, please.", true},
		{"stop stop", "stop stop", true},
		{"stop stop stop", "STOP STOP STOP!!", true},
		{"stop the agent", "Stop the agent.", true},
		{"abort", "abort", true},
		{"esc", "ESC", true},
		{"exit", "exit", true},
		{"quit", "quit", true},
		{"interrupt", "interrupt!", true},
		{"halt", "Halt!", true},
		{"cancel", "cancel", true},
		{"cancel that", "cancel that", true},
		{"ctrl c", "ctrl+c", true},
		{"command", "/stop", true},
		{"wait", "wait", true},
		{"wait bang", "Wait!", true},
		{"wait ellipsis", "wait…", true},
		{"wait wait", "wait wait", true},
		{"full-width letters", "ＳＴＯＰ", true},
		{"emphasis", "**STOP**", true},
		{"backticks", "`stop`", true},
		{"code block", "```\nstop\n```", true},
		{"zero width space", "st\u200bop", true},
		{"no-break spaces", "\u00a0stop\u00a0now\u00a0", true},

		// Mentions.
		{"discord mention", "<@123456789012345678> stop", true},
		{"discord nick mention", "<@!123456789012345678> stop!", true},
		{"slack mention", "<@U012ABCDEF> STOP", true},
		{"slack mention with name", "<@U012ABCDEF|gateway> stop", true},
		{"mention comma", "<@123>, stop.", true},
		{"mention colon no space", "<@123>:stop", true},
		{"mention command", "<@123> /stop", true},
		{"mention in quotes", "“<@123> stop”", true},
		{"plain name", "@gateway stop", true},
		{"plain name upper comma", "@Gateway, STOP!", true},
		{"plain name colon", "@gateway: wait", true},
		{"plain name with space", "@claude bot stop", true},
		{"plain name after mention", "<@1> @gateway stop", true},
		{"mention then at sign", "<@1>, @gateway: stop", true},
		{"plain name quoted phrase", "@gateway “stop”", true},

		// Spanish.
		{"detente", "¡Detente!", true},
		{"detén", "detén", true},
		{"detén decomposed", "dete\u0301n", true},
		{"deten", "DETEN", true},
		{"para", "¡para!", true},
		{"para ya", "para ya", true},
		{"basta", "¡Basta!", true},
		{"ya basta", "ya basta", true},
		// French.
		{"arrête", "Arrête !", true},
		{"arrete", "arrete", true},
		{"arrêtez", "Arrêtez.", true},
		{"guillemets", "« stop »", true},
		{"french stop", "Stop !", true},
		// German.
		{"stopp", "Stopp!", true},
		{"anhalten", "Anhalten", true},
		{"aufhören", "Aufhören!", true},
		{"aufhoren", "aufhoren", true},
		{"hör auf", "Hör auf!", true},
		// Russian.
		{"стоп", "Стоп!", true},
		{"стоп upper", "СТОП", true},
		{"остановись", "остановись.", true},
		{"прекрати", "Прекрати!!!", true},
		// Chinese.
		{"停止", "停止", true},
		{"停止 full stop", "停止。", true},
		{"停下来", "停下来！", true},
		{"暂停", "暂停", true},
		{"停 spaces", "\u3000停\u3000", true},
		// Japanese.
		{"やめて", "やめて", true},
		{"やめて full-width bangs", "やめて！！", true},
		{"止めて", "止めて。", true},
		{"ストップ", "ストップ", true},
		{"corner brackets", "「やめて」", true},
		// Hindi.
		{"रुको", "रुको", true},
		{"रुको danda", "रुको।", true},
		{"रुको bang", "रुको!", true},
		// Arabic.
		{"توقف", "توقف", true},
		{"توقف question", "توقف؟", true},
		{"توقف marks", "تَوَقَّفْ!", true},

		// Non-stops.
		{"empty", "", false},
		{"spaces only", "   ", false},
		{"punctuation only", "!!!", false},
		{"mention only", "<@123>", false},
		{"name only", "@gateway", false},
		{"don't stop", "don't stop", false},
		{"don’t stop curly", "Don’t stop!", false},
		{"stop using tabs", "stop using tabs in the file", false},
		{"stop at end", "please fix the bug and then stop", false},
		{"wait for", "wait for the build", false},
		{"please wait", "please wait", false},
		{"wait also", "wait, also update the readme", false},
		{"wait a second", "wait a second I meant the other file", false},
		{"wait ellipsis then text", "wait… also", false},
		{"stopwatch", "stopwatch", false},
		{"stops", "stops", false},
		{"nonstop", "nonstop", false},
		{"stop typo joined", "stopit", false},
		{"stop and wait", "stop wait", false},
		{"hold on", "hold on", false},
		{"exit code", "exit code 1", false},
		{"para in sentence", "para mañana", false},
		{"arrête in sentence", "arrête de modifier ce fichier", false},
		{"stopp in sentence", "stopp nicht", false},
		{"стоп in sentence", "стоп-кран не трогай", false},
		{"停止 in sentence", "不要停止", false},
		{"やめて in sentence", "それはやめて", false},
		{"रुको in sentence", "मत रुको", false},
		{"توقف in sentence", "لا تتوقف", false},
		{"other name", "@gatewaybot stop", false},
		{"name not first", "stop @gateway", false},
		{"mention later", "stop <@1>", false},
		{"broken mention", "<@123 stop", false},
		{"slash other", "/stopped", false},
		{"command with text", "/stop now please later", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := d.IsStop(tc.in); got != tc.want {
				t.Errorf("IsStop(%q) = %v, want %v (normalised %q)", tc.in, got, tc.want, Normalize(tc.in))
			}
		})
	}
}

// A stop of everything: a phrase and "all" or "everything", addressed and
// decorated as any stop; a stop too. Anything else after "all" is not.
func TestIsStopAll(t *testing.T) {
	d := New(DefaultConfig(), "gateway")
	tests := []struct {
		in        string
		stop, all bool
	}{
		{"stop all", true, true},
		{"Stop all!", true, true},
		{"/stop all", true, true},
		{"@gateway stop all", true, true},
		{"<@1> cancel everything", true, true},
		{"stop everything", true, true},
		{"stop stop all", true, true},
		{"stop", true, false},
		{"stop it", true, false},
		{"please stop", true, false},
		{"stop all tests", false, false},
		{"all", false, false},
		{"run all", false, false},
		{"stop all of the builds", false, false},
	}
	for _, tc := range tests {
		if stop, all := d.IsStop(tc.in), d.IsStopAll(tc.in); stop != tc.stop || all != tc.all {
			t.Errorf("%q: IsStop %v IsStopAll %v, want %v %v", tc.in, stop, all, tc.stop, tc.all)
		}
	}
	if off := New(Config{Enabled: false}); off.IsStopAll("stop all") {
		t.Error("a disabled detector takes stop all")
	}
}

func TestIsStopConfig(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		names []string
		in    string
		want  bool
	}{
		{"default", DefaultConfig(), nil, "stop", true},
		{"disabled", Config{Enabled: false}, nil, "stop", false},
		{"disabled command", Config{Enabled: false}, nil, "/stop", false},
		{"added", Config{Enabled: true, Add: []string{"Hold on!"}}, nil, "hold on", true},
		{"added matches decorated", Config{Enabled: true, Add: []string{"hold on"}}, nil, "“HOLD ON…”", true},
		{"added with spaces", Config{Enabled: true, Add: []string{"  never   mind "}}, nil, "never mind", true},
		{"added repeats", Config{Enabled: true, Add: []string{"enough"}}, nil, "enough enough", true},
		{"added empty ignored", Config{Enabled: true, Add: []string{"", "!!!"}}, nil, "", false},
		{"removed", Config{Enabled: true, Remove: []string{"exit"}}, nil, "exit", false},
		{"removed decorated", Config{Enabled: true, Remove: []string{"  EXIT. "}}, nil, "exit", false},
		{"removed leaves others", Config{Enabled: true, Remove: []string{"exit"}}, nil, "stop", true},
		{"removed repeat", Config{Enabled: true, Remove: []string{"stop"}}, nil, "stop stop stop", false},
		{"removed unknown", Config{Enabled: true, Remove: []string{"nope"}}, nil, "stop", true},
		{"remove wins over add", Config{Enabled: true, Add: []string{"x"}, Remove: []string{"X"}}, nil, "x", false},
		{"name with at", DefaultConfig(), []string{"@Bot"}, "@bot stop", true},
		{"name empty", DefaultConfig(), []string{"", "@"}, "@ stop", false},
		{"no names", DefaultConfig(), nil, "@bot stop", false},
		{"name prefix of word", DefaultConfig(), []string{"bot"}, "@botty stop", false},
		{"longer name first", DefaultConfig(), []string{"bot", "bot two"}, "@bot two stop", true},
		{"name hyphen rest", DefaultConfig(), []string{"bot"}, "@bot-stop", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := New(tc.cfg, tc.names...)
			if got := d.IsStop(tc.in); got != tc.want {
				t.Errorf("IsStop(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestIsStopLength(t *testing.T) {
	d := New(DefaultConfig(), "gateway")
	long := "<@U012ABCDEF|gateway>, “" + "stop" + strings.Repeat("!", 20) + "”"
	if !d.IsStop(long) {
		t.Errorf("IsStop(%q) = false, want true", long)
	}
	padded := "stop" + strings.Repeat("!", 400)
	if d.IsStop(padded) {
		t.Errorf("IsStop(stop + 400 bangs) = true, want false (over the length cap)")
	}
	for _, p := range builtin {
		said := p
		if !strings.Contains(p, " ") {
			said = p + " " + p
		}
		m := "<@!123456789012345678>, “" + said + "”!!!"
		if !d.IsStop(m) {
			t.Errorf("IsStop(%q) = false, want true", m)
		}
	}
}

func TestBuiltinPhrases(t *testing.T) {
	got := BuiltinPhrases()
	if diff := cmp.Diff(builtin, got); diff != "" {
		t.Errorf("BuiltinPhrases() mismatch (-want +got):\n%s", diff)
	}
	got[0] = "changed"
	if builtin[0] == "changed" {
		t.Errorf("BuiltinPhrases() returned the package's own slice")
	}
	d := New(DefaultConfig())
	seen := map[string]bool{}
	for _, p := range builtin {
		if n := Normalize(p); n != p {
			t.Errorf("built-in %q normalises to %q, want itself", p, n)
		}
		if seen[p] {
			t.Errorf("built-in %q listed twice", p)
		}
		seen[p] = true
		if !d.IsStop(p) {
			t.Errorf("IsStop(%q) = false, want true", p)
		}
	}
	for _, p := range []string{"stop", "esc", "abort", "exit", "interrupt", "halt", "cancel", "wait", "/stop",
		"detente", "detén", "deten", "para", "arrête", "arrete", "stopp", "anhalten", "aufhören", "aufhoren",
		"стоп", "остановись", "прекрати", "停止", "停下来", "暂停", "やめて", "止めて", "रुको", "توقف"} {
		if !slices.Contains(builtin, p) {
			t.Errorf("built-in list lacks %q", p)
		}
	}
}

// TestIsStopConcurrent runs one Detector from many goroutines; with -race
// it checks that IsStop only reads.
func TestIsStopConcurrent(t *testing.T) {
	d := New(DefaultConfig(), "gateway")
	done := make(chan bool)
	for range 8 {
		go func() {
			ok := true
			for range 200 {
				ok = ok && d.IsStop("@gateway stop!") && !d.IsStop("don't stop")
			}
			done <- ok
		}()
	}
	for range 8 {
		if !<-done {
			t.Errorf("IsStop gave a wrong answer under concurrency")
		}
	}
}

func FuzzIsStop(f *testing.F) {
	for _, s := range []string{"stop", "STOP!!!", "<@1> stop", "@gateway, wait", "don't stop",
		"wait for the build", "“停止。”", "<@U1|x> /stop", "stop stop stop", "@gatewayx stop"} {
		f.Add(s)
	}
	for _, s := range builtin {
		f.Add(s)
	}
	on := New(Config{Enabled: true, Add: []string{"hold on"}}, "gateway")
	off := New(Config{Enabled: false})
	f.Fuzz(func(t *testing.T, s string) {
		got := on.IsStop(s)
		if on.IsStopAll(s) && !got {
			t.Errorf("IsStopAll(%q) = true but IsStop = false", s)
		}
		if off.IsStop(s) || off.IsStopAll(s) {
			t.Errorf("disabled IsStop(%q) = true", s)
		}
		if got && !on.IsStop(Normalize(s)) {
			t.Errorf("IsStop(%q) = true but IsStop(Normalize) = false (normalised %q)", s, Normalize(s))
		}
		if got && !on.IsStop(`"`+s+`"!`) && len(s)+3 <= on.maxIn {
			t.Errorf("IsStop(%q) = true but false once quoted", s)
		}
	})
}
