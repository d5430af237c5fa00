package discord

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/channels"
)

// TestCommandsRegisteredAtStart: at the first READY the gateway's commands
// are registered with one bulk overwrite, globally without guilds and in
// each guild of Options.Guilds (where they appear at once) with them.
func TestCommandsRegisteredAtStart(t *testing.T) {
	want := []string{}
	for _, c := range channels.Commands() {
		want = append(want, c.Name)
	}
	want = append(want, channels.AgentCommandPicker) // the agent's commands' picker, last
	for _, perGuild := range []bool{false, true} {
		t.Run(fmt.Sprint("guilds=", perGuild), func(t *testing.T) {
			f := newFake(t)
			o, scope, other := Options{}, "", "guild"
			if perGuild {
				o.Guilds, scope, other = []string{f.guild}, f.guild, ""
			}
			start(t, f, o)
			ctx := testCtx(t)
			f.waitFor(ctx, "commands registered", func() bool { return f.commandPuts > 0 })
			got, _ := f.registered(scope)
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, want) {
				t.Errorf("registered %q in scope %q, want %q", names, scope, want)
			}
			if other == "" {
				if _, ok := f.registered(""); ok {
					t.Error("commands were registered globally although the adapter has guilds")
				}
			}
		})
	}
}

// testCommands are commands with an argument that can be suggested, an
// agent's own, and one whose name Discord does not take (after /stop,
// not the whole catalogue, which grows).
func testCommands() []channels.CommandInfo {
	return append([]channels.CommandInfo{{Name: channels.CommandStop, Description: "Stop the running turn"}},
		channels.CommandInfo{Name: "model", Description: "Set the model\nof the session", Arg: &channels.CommandArg{Name: "model", Description: "", Suggest: true}},
		channels.CommandInfo{Name: "compact", Description: "Compact the context", Agent: true},
		channels.CommandInfo{Name: "Bad Name", Description: "never registered"},
	)
}

// TestSetCommands: SetCommands replaces the registered commands; an
// argument becomes a string option, autocompleted when suggested; a name
// Discord refuses is left out rather than failing the whole overwrite.
func TestSetCommands(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	if err := s.a.SetCommands(ctx, testCommands()); err != nil {
		t.Fatalf("SetCommands: %v", err)
	}
	got, _ := f.registered("")
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	if want := []string{"stop", "model", "compact"}; !slices.Equal(names, want) {
		t.Fatalf("registered %q, want %q", names, want)
	}
	m := got[1]
	if m.Description != "Set the model of the session" {
		t.Errorf("description %q, want one line", m.Description)
	}
	if len(m.Options) != 1 || m.Options[0].Name != "model" || m.Options[0].Type != 3 || !m.Options[0].Autocomplete || m.Options[0].Description != "model" {
		t.Errorf("model's options = %+v, want one autocompleted string option \"model\"", m.Options)
	}
	if o := got[0].Options; len(o) != 1 || o[0].Type != 3 || o[0].Required || len(o[0].Choices) != 1 || o[0].Choices[0].Value != "all" || o[0].Autocomplete {
		t.Errorf("stop has options %+v, want one optional choice \"all\"", o)
	}
}

// TestSlashStopAll: /stop with its choice "all" arrives as the stop
// command with the argument "all", which stops everything (abort's words
// for it), queued messages too; /stop alone has no argument.
func TestSlashStopAll(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	f.slash(ann, f.thread, "stop", "what", "all", false)
	in := s.next(t)
	if in.Command == nil || in.Command.Name != channels.CommandStop || in.Command.Args != "all" || !abort.IsAllWord(in.Command.Args) {
		t.Fatalf("inbound command = %+v, want stop with the argument all", in.Command)
	}
}

// TestSlashCommand: an application command in the bot's thread is
// acknowledged at once as a private deferred answer and arrives as
// Inbound.Command; Reply answers privately, first in place of Discord's
// "thinking…", then as follow-ups.
func TestSlashCommand(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	token := f.slash(ann, f.thread, "stop", "", "", false)
	in := s.next(t)
	if in.Intent() != channels.IntentCommand || in.Command.Name != channels.CommandStop || in.Thread != f.threadRef() || in.Author.ID != ann.ID {
		t.Fatalf("inbound = %+v, want the stop command in the thread from Ann", in)
	}
	it := f.interaction(token)
	var ack struct {
		Data struct {
			Flags int `json:"flags"`
		} `json:"data"`
	}
	json.Unmarshal(it.AckBody, &ack)
	if it.AckType != 5 || ack.Data.Flags&64 == 0 {
		t.Errorf("acknowledged with type %d flags %d, want a deferred ephemeral answer (5, 64)", it.AckType, ack.Data.Flags)
	}
	if err := in.Reply(ctx, "Stopped."); err != nil {
		t.Fatalf("Reply: %v", err)
	}
	if it := f.interaction(token); it.Original == nil || *it.Original != "Stopped." {
		t.Errorf("the deferred answer reads %v, want %q", it.Original, "Stopped.")
	}
	if err := in.Reply(ctx, "And more."); err != nil {
		t.Fatalf("second Reply: %v", err)
	}
	fu := f.followupsFor(token)
	if len(fu) != 1 || fu[0].Content != "And more." || fu[0].Flags&64 == 0 {
		t.Errorf("follow-ups = %+v, want one ephemeral \"And more.\"", fu)
	}
}

// TestSlashAgentCommand: an agent's own command registered with
// SetCommands arrives as the prompt "/name arg".
func TestSlashAgentCommand(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	if err := s.a.SetCommands(ctx, testCommands()); err != nil {
		t.Fatal(err)
	}
	f.slash(ann, f.thread, "compact", "", "", false)
	in := s.next(t)
	if in.Intent() != channels.IntentMessage || in.Text != "/compact" || in.Reply == nil {
		t.Fatalf("inbound = %+v, want the prompt /compact", in)
	}
}

// TestSlashOutsideThread: a command in a channel (not a thread of the
// bot's) is answered privately and delivers nothing.
func TestSlashOutsideThread(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	token := f.slash(ann, f.channel, "stop", "", "", false)
	f.waitFor(ctx, "the private answer", func() bool {
		in := f.interactions[token]
		return in != nil && in.Original != nil
	})
	if it := f.interaction(token); !strings.Contains(*it.Original, "threads") {
		t.Errorf("answer %q, want one that points to threads", *it.Original)
	}
	f.say(ann, f.thread, "after", false)
	if in := s.next(t); in.Text != "after" {
		t.Errorf("delivered %+v, want only the later message", in)
	}
}

// TestAutocomplete: typing a command's argument asks for suggestions
// (Inbound.Suggest with the command and what was typed); Suggest answers
// the interaction with at most 25 choices.
func TestAutocomplete(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	token := f.slash(ann, f.thread, "model", "model", "op", true)
	in := s.next(t)
	if in.Intent() != channels.IntentSuggest || in.Command.Name != "model" || in.Command.Args != "op" || in.Thread != f.threadRef() {
		t.Fatalf("inbound = %+v, want a request for suggestions of model after \"op\"", in)
	}
	var opts []channels.Option
	for i := range 30 {
		opts = append(opts, channels.Option{ID: fmt.Sprintf("opus-%d", i), Label: fmt.Sprintf("Opus %d", i)})
	}
	if err := in.Suggest(ctx, opts); err != nil {
		t.Fatalf("Suggest: %v", err)
	}
	it := f.interaction(token)
	var ack struct {
		Data struct {
			Choices []struct{ Name, Value string } `json:"choices"`
		} `json:"data"`
	}
	json.Unmarshal(it.AckBody, &ack)
	if it.AckType != 8 || len(ack.Data.Choices) != 25 || ack.Data.Choices[0].Name != "Opus 0" || ack.Data.Choices[0].Value != "opus-0" {
		t.Errorf("answered with type %d and %+v, want 25 choices starting with Opus 0", it.AckType, ack.Data.Choices)
	}
}
