package slack

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

// TestPrefixCommands: in a thread, a gateway command typed with the
// command prefix or right after a mention of the app arrives as that
// command, for every name of channels.Commands(); other "!text", a name
// the gateway does not know and a space after the prefix stay prompts.
func TestPrefixCommands(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{CommandPrefix: "!"})
	r := run(t, a, nil)
	ctx := testCtx(t)
	s := f.mustSay(ctx, sayOptions{user: "U0ANN", text: "open a thread", mention: true})
	r.next(ctx)
	type tc struct {
		text    string
		mention bool
		want    *channels.Command
	}
	cases := []tc{
		{"!nonsense here", false, nil},
		{"! stop", false, nil},
		{"!", false, nil},
		{"tell me about !stop", false, nil},
		{"please do it", true, nil},
	}
	for _, c := range channels.Commands() {
		cases = append(cases,
			tc{"!" + c.Name, false, &channels.Command{Name: c.Name}},
			tc{"!" + c.Name + " some args ", false, &channels.Command{Name: c.Name, Args: "some args"}},
			tc{c.Name, true, &channels.Command{Name: c.Name}},
			tc{c.Name, false, nil}, // a stop word, or a prompt: not a command
		)
	}
	for _, c := range channels.Commands() {
		// After a mention, "stop the server" is a prompt for the agent;
		// a command with an argument takes what follows.
		want := &channels.Command{Name: c.Name, Args: "the server"}
		if c.Arg == nil {
			want = nil
		}
		cases = append(cases, tc{c.Name + " the server", true, want})
	}
	for _, c := range cases {
		f.mustSay(ctx, sayOptions{user: "U0ANN", thread: s.ts, text: c.text, mention: c.mention})
		in := r.next(ctx)
		want := channels.IntentMessage
		if c.want != nil {
			want = channels.IntentCommand
		}
		if in.Intent() != want || !cmp.Equal(in.Command, c.want) {
			t.Errorf("%q (mention %v) arrived as %v, command %+v; want %v, %+v", c.text, c.mention, in.Intent(), in.Command, want, c.want)
		}
	}
}

// TestCommandPrefixOption: another prefix replaces "!"; New refuses a
// prefix Slack would take as its own slash command.
func TestCommandPrefixOption(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{CommandPrefix: ".."})
	r := run(t, a, nil)
	ctx := testCtx(t)
	s := f.mustSay(ctx, sayOptions{user: "U0ANN", text: "open a thread", mention: true})
	r.next(ctx)
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: s.ts, text: "!stop"})
	if in := r.next(ctx); in.Command != nil {
		t.Errorf("!stop with prefix \"..\" = command %+v, want a prompt", in.Command)
	}
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: s.ts, text: "..stop"})
	if in := r.next(ctx); in.Command == nil || in.Command.Name != channels.CommandStop {
		t.Errorf("..stop = command %+v, want stop", in.Command)
	}
	for _, p := range []string{"/", "/x", "a b", "toolong", "<"} {
		if _, err := New(Options{AppToken: "xapp-1", BotToken: "xoxb-1", CommandPrefix: p}); err == nil {
			t.Errorf("New with command prefix %q = nil error", p)
		}
		c := DefaultConfig()
		c.CommandPrefix = p
		if errs := c.Validate("channels.slack", true); len(errs) != 1 || !cmp.Equal(errs[0].(*channels.ConfigError).Key, "channels.slack.commandPrefix") {
			t.Errorf("Validate with command prefix %q = %v, want one error on channels.slack.commandPrefix", p, errs)
		}
	}
}

// TestSlashCommandStartsThread: the app's slash command is acknowledged,
// its text becomes the first message of a new thread naming the person,
// and arrives as a prompt in that thread, which is bound (the person's
// next message there arrives too). Without text the person is told
// privately and nothing arrives.
func TestSlashCommandStartsThread(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	env, err := f.slash(ctx, "U0ANN", fakeChannel, "/agent", "fix the &lt;build&gt;")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.waitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	in := r.next(ctx)
	if in.Intent() != channels.IntentMessage || in.Text != "fix the <build>" || in.Author.ID != "U0ANN" || in.Author.Name != "Ann" || in.Space != f.team {
		t.Fatalf("inbound = %+v, want the prompt %q by Ann", in, "fix the <build>")
	}
	m, ok := f.message(fakeChannel, in.Thread.Thread)
	if !ok || m.ThreadTS != "" || m.Text != "<@U0ANN>: fix the &lt;build&gt;" {
		t.Fatalf("the thread's first message = %+v (found %v), want a top-level post naming Ann", m, ok)
	}
	if in.Thread.Channel != fakeChannel || string(in.ID) != m.TS {
		t.Errorf("inbound thread %v id %q, want %s/%s", in.Thread, in.ID, fakeChannel, m.TS)
	}
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: m.TS, text: "and the tests"})
	if next := r.next(ctx); next.Text != "and the tests" || next.Thread != in.Thread {
		t.Errorf("next message = %q in %v, want %q in the new thread", next.Text, next.Thread, "and the tests")
	}

	env, err = f.slash(ctx, "U0ANN", fakeChannel, "/agent", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.waitFor(ctx, "a private usage note", func() bool {
		for _, e := range f.ephemerals {
			if e.User == "U0ANN" && e.Channel == fakeChannel {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	f.mustSay(ctx, sayOptions{user: "U0ANN", thread: m.TS, text: "marker"})
	if next := r.next(ctx); next.Text != "marker" {
		t.Errorf("after an empty slash command, inbound = %q, want nothing before the marker", next.Text)
	}
}

// TestChoiceAsSelect: a choice of more than five options is a select
// menu, not buttons; picking one arrives as Inbound.Choice; five options
// stay buttons; 150 options are two menus, each within Slack's 100.
func TestChoiceAsSelect(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	th := ref(fakeChannel, fakeThread)
	opts := func(n int) []channels.Option {
		var out []channels.Option
		for i := range n {
			out = append(out, channels.Option{ID: fmt.Sprintf("model/%d", i), Label: fmt.Sprintf("Model %d", i)})
		}
		return out
	}
	h, err := a.Prompt(ctx, th, channels.Choice{Text: "Which model?", Options: opts(7)})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := f.message(fakeChannel, string(h.ID))
	if strings.Contains(string(m.Blocks), `"button"`) || !strings.Contains(string(m.Blocks), `"static_select"`) {
		t.Fatalf("blocks of a 7-option choice = %s, want a static_select and no buttons", m.Blocks)
	}
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(h.ID), "model/6"); err != nil {
		t.Fatal(err)
	}
	in := r.next(ctx)
	if in.Intent() != channels.IntentChoice || !cmp.Equal(*in.Choice, channels.ChoiceAnswer{Prompt: h, OptionID: "model/6"}) {
		t.Errorf("pick = %v %+v, want the choice model/6 of %v", in.Intent(), in.Choice, h)
	}

	h5, err := a.Prompt(ctx, th, channels.Choice{Text: "Which?", Options: opts(5)})
	if err != nil {
		t.Fatal(err)
	}
	m5, _ := f.message(fakeChannel, string(h5.ID))
	if strings.Count(string(m5.Blocks), `"button"`) != 5 || strings.Contains(string(m5.Blocks), "select") {
		t.Errorf("blocks of a 5-option choice = %s, want five buttons", m5.Blocks)
	}

	big, err := a.Prompt(ctx, th, channels.Choice{Text: "Which of many?", Options: opts(150)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.click(ctx, "U0ANN", fakeChannel, string(big.ID), "model/149"); err != nil {
		t.Fatal(err)
	}
	if in := r.next(ctx); in.Choice == nil || in.Choice.OptionID != "model/149" {
		t.Errorf("pick in the second menu = %+v, want model/149", in.Choice)
	}
}

// TestSlashCommandRefusedPrivately: a slash command from someone Admit
// refuses (here: the channel's allow-list names only Bob) posts nothing
// in the channel and delivers nothing; the person is told privately, by
// Admit through the Inbound's Reply, why. Admit sees the channel, the
// workspace and the person.
func TestSlashCommandRefusedPrivately(t *testing.T) {
	f := newFake(t, fakeOptions{})
	f.addUser("U0ANN", "Ann")
	f.addUser("U0BOB", "Bob")
	asked := make(chan channels.Inbound, 4)
	a := f.adapter(t, Options{Admit: func(ctx context.Context, in channels.Inbound) bool {
		asked <- in
		if in.Author.ID == "U0BOB" {
			return true
		}
		if err := in.Reply(ctx, "Sorry, you don't have access to the agent here."); err != nil {
			t.Errorf("Reply = %v", err)
		}
		return false
	}})
	r := run(t, a, nil)
	ctx := testCtx(t)
	env, err := f.slash(ctx, "U0ANN", fakeChannel, "/agent", "rm -rf the build")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.waitAck(ctx, env); err != nil {
		t.Fatal(err)
	}
	if err := f.waitFor(ctx, "a private refusal", func() bool {
		for _, e := range f.ephemerals { // waitFor holds the fake's lock
			if e.User == "U0ANN" && e.Channel == fakeChannel && e.ThreadTS == "" && strings.Contains(e.Text, "don't have access") {
				return true
			}
		}
		return false
	}); err != nil {
		t.Fatal(err)
	}
	if in := <-asked; in.Thread.Channel != fakeChannel || in.Author.ID != "U0ANN" || in.Space != f.team || in.Text != "rm -rf the build" {
		t.Errorf("Admit was asked about %+v, want Ann's prompt in %s of %s", in, fakeChannel, f.team)
	}
	if posted := f.thread(fakeChannel, ""); len(posted) != 0 {
		t.Errorf("the refused command posted %+v in the channel", posted)
	}

	env, err = f.slash(ctx, "U0BOB", fakeChannel, "/agent", "the marker")
	if err != nil {
		t.Fatal(err)
	}
	if in := r.next(ctx); in.Text != "the marker" || in.Author.ID != "U0BOB" {
		t.Errorf("inbound = %+v, want Bob's marker (nothing of Ann's)", in)
	}
	if posted := f.thread(fakeChannel, ""); len(posted) != 1 || !strings.Contains(posted[0].Text, "the marker") {
		t.Errorf("the channel shows %+v, want Bob's post only", posted)
	}
}
