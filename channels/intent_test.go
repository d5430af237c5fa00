package channels

import (
	"context"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       *Command
	}{
		{"stop", "/stop", &Command{Name: CommandStop}},
		{"any case", "/STOP", &Command{Name: CommandStop}},
		{"spaces before (Slack wants one before a slash)", "  \n/stop", &Command{Name: CommandStop}},
		{"arguments", "/stop  now please ", &Command{Name: CommandStop, Args: "now please"}},
		{"arguments on the next line", "/stop\nthe tests", &Command{Name: CommandStop, Args: "the tests"}},
		{"an agent's command", "/compact", nil},
		{"an agent's command with arguments", "/review the diff", nil},
		{"a longer word", "/stopwatch", nil},
		{"two slashes", "//stop", nil},
		{"a slash alone", "/", nil},
		{"a stop word", "stop", nil},
		{"in the middle", "please /stop", nil},
		{"a path", "/usr/bin/stop", nil},
		{"a letter that folds into s in Unicode", "/ſtop", nil},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseCommand(tc.text)); diff != "" {
				t.Errorf("ParseCommand(%q) (-want +got):\n%s", tc.text, diff)
			}
		})
	}
}

func TestIntent(t *testing.T) {
	choice := &ChoiceAnswer{OptionID: "allow"}
	cmd := &Command{Name: CommandStop}
	for _, tc := range []struct {
		name string
		in   Inbound
		want IntentKind
	}{
		{"text", Inbound{Text: "hello"}, IntentMessage},
		{"files only", Inbound{Files: []File{{Name: "a.txt"}}}, IntentMessage},
		{"a stop word is a message; the router's stop words judge it", Inbound{Text: "stop"}, IntentMessage},
		{"stop button", Inbound{Stop: true}, IntentStop},
		{"click", Inbound{Choice: choice}, IntentChoice},
		{"command", Inbound{Text: "/stop", Command: cmd}, IntentCommand},
		{"stop and choice", Inbound{Stop: true, Choice: choice}, IntentInvalid},
		{"stop and command", Inbound{Stop: true, Command: cmd}, IntentInvalid},
		{"choice and command", Inbound{Choice: choice, Command: cmd}, IntentInvalid},
		{"deleted thread", Inbound{Closed: true}, IntentClose},
		{"deleted and stop", Inbound{Closed: true, Stop: true}, IntentInvalid},
		{"suggestions", Inbound{Command: cmd, Suggest: func(context.Context, []Option) error { return nil }}, IntentSuggest},
		{"suggestions for no command", Inbound{Suggest: func(context.Context, []Option) error { return nil }}, IntentInvalid},
		{"form answer", Inbound{Form: &FormAnswer{Action: FormAccept}}, IntentForm},
		{"reaction", Inbound{Reaction: &Reaction{Emoji: "🛑"}}, IntentReaction},
		{"reaction and form", Inbound{Reaction: &Reaction{Emoji: "🛑"}, Form: &FormAnswer{}}, IntentInvalid},
		{"archive", Inbound{Archived: true}, IntentArchive},
		{"missed", Inbound{Missed: &Missed{N: 11, Max: 10}}, IntentMissed},
		{"archive and close", Inbound{Archived: true, Closed: true}, IntentInvalid},
		{"suggestions and stop", Inbound{Stop: true, Command: cmd, Suggest: func(context.Context, []Option) error { return nil }}, IntentInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.in.Intent(); got != tc.want {
				t.Errorf("Intent() = %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzParseCommand: whatever people write, a command found is a known
// name written at the start of the text, and its arguments are the rest.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/stop", " /Stop now", "/compact", "/stopwatch", "/", "/ſtop", "/stop\x00", "\u3000/stop x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		c := ParseCommand(text)
		if c == nil {
			return
		}
		known := false
		for _, n := range Commands() {
			known = known || c.Name == n.Name
		}
		if !known {
			t.Fatalf("ParseCommand(%q) = unknown command %q", text, c.Name)
		}
		rest, ok := strings.CutPrefix(strings.TrimLeftFunc(text, unicode.IsSpace), "/")
		if !ok || len(rest) < len(c.Name) || !strings.EqualFold(rest[:len(c.Name)], c.Name) {
			t.Fatalf("ParseCommand(%q) = %q, not the text's first word", text, c.Name)
		}
		if after := rest[len(c.Name):]; strings.TrimSpace(after) != c.Args || (after != "" && !unicode.IsSpace([]rune(after)[0])) {
			t.Fatalf("ParseCommand(%q): args %q, want the text after the name", text, c.Args)
		}
	})
}

// TestCommandsCatalogue: every command has a name ParseCommand finds and
// a description that fits Discord's 100 characters; Commands returns a
// copy the caller may change.
func TestCommandsCatalogue(t *testing.T) {
	cmds := Commands()
	if len(cmds) == 0 {
		t.Fatal("no commands")
	}
	for _, c := range cmds {
		if got := ParseCommand("/" + c.Name); got == nil || got.Name != c.Name {
			t.Errorf("ParseCommand(/%s) = %+v", c.Name, got)
		}
		if c.Description == "" || len([]rune(c.Description)) > 100 {
			t.Errorf("/%s: description %q (1 to 100 characters)", c.Name, c.Description)
		}
		if c.Agent {
			t.Errorf("/%s: a gateway command marked as the agent's", c.Name)
		}
	}
	cmds[0].Name = "changed"
	if Commands()[0].Name == "changed" {
		t.Error("Commands returned the catalogue itself")
	}
}
