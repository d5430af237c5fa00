package discord

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// The agent's own commands on Discord, end to end: /agent-command, its
// autocomplete and its refusal (steering the session is the suite's:
// e2e.Run).

// framesWith counts the frames of the gateway's event logs that contain
// sub.
func (g *gateway) framesWith(sub string) int {
	g.t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.dir, "events", "*"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			g.t.Fatal(err)
		}
		n += strings.Count(string(b), sub)
	}
	return n
}

// waitAnswer waits for the private answer to command interaction token
// and returns it.
func (g *gateway) waitAnswer(token string) string {
	g.t.Helper()
	var got string
	g.f.waitFor(testCtx(g.t), "the answer to "+token, func() bool {
		if in := g.f.interactions[token]; in != nil && in.Original != nil {
			got = *in.Original
			return true
		}
		return false
	})
	return got
}

// slashOpt is one string option of an application command interaction.
type slashOpt struct {
	name, value string
	focused     bool // the option being typed, in an autocomplete
}

// slashWith is slash with any string options: who gives application
// command name in channel (or, with autocomplete, types in it), and the
// interaction's token is returned.
func (f *fakeDiscord) slashWith(who fakeUser, channel, name string, opts []slashOpt, autocomplete bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newIDLocked()
	token := "itoken-" + id
	f.interactions[token] = &fakeInteraction{ID: id, Token: token, Sent: time.Now()}
	var os []any
	for _, o := range opts {
		m := map[string]any{"name": o.name, "type": 3, "value": o.value}
		if o.focused {
			m["focused"] = true
		}
		os = append(os, m)
	}
	typ := 2
	if autocomplete {
		typ = 4
	}
	d := map[string]any{
		"id":             id,
		"application_id": f.app,
		"type":           typ,
		"token":          token,
		"version":        1,
		"channel_id":     channel,
		"guild_id":       f.chans[channel].Guild,
		"member":         map[string]any{"user": userJSON(who), "roles": nonNil(who.Roles)},
		"data":           map[string]any{"id": f.newIDLocked(), "name": name, "type": 1, "options": os},
	}
	f.dispatchLocked("INTERACTION_CREATE", d)
	return token
}

// The agent's own commands on Discord: /agent-command is registered once
// with the gateway's commands; its autocomplete offers the thread's agent
// commands with their descriptions, and the one picked, with its input,
// reaches the agent as a prompt, even one whose name is also a gateway
// command's (the demo agent's help).
func TestAgentCommandPickerEndToEnd(t *testing.T) {
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Approvers: []string{ann.ID}})
	ctx := testCtx(t)
	f.waitFor(ctx, "commands registered", func() bool { return f.commandPuts > 0 })
	cmds, _ := f.registered("")
	var picker *fakeAppCommand
	for i := range cmds {
		if cmds[i].Name == channels.AgentCommandPicker {
			picker = &cmds[i]
		}
	}
	if picker == nil || len(picker.Options) != 2 || picker.Options[0].Name != "command" || !picker.Options[0].Autocomplete || !picker.Options[0].Required ||
		picker.Options[1].Name != "input" || picker.Options[1].Autocomplete || picker.Options[1].Required {
		t.Fatalf("registered picker = %+v, want /agent-command with an autocompleted command and an input", picker)
	}

	id := f.say(ann, f.channel, "hello", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	g.waitEnd(th)

	// Autocomplete: the agent's commands that match what is typed, with
	// the input typed before the command.
	tok := f.slashWith(bob, id, channels.AgentCommandPicker, []slashOpt{{"input", "x", false}, {"command", "/Hel", true}}, true)
	f.waitFor(ctx, "the suggestions", func() bool { return !f.interactions[tok].Acked.IsZero() })
	var ack struct {
		Data struct {
			Choices []struct{ Name, Value string } `json:"choices"`
		} `json:"data"`
	}
	json.Unmarshal(f.interaction(tok).AckBody, &ack)
	if it := f.interaction(tok); it.AckType != 8 || len(ack.Data.Choices) != 1 ||
		ack.Data.Choices[0].Value != "help" || ack.Data.Choices[0].Name != "help — List the demo scenarios" {
		t.Fatalf("autocomplete answered with type %d and %+v, want the agent's help with its description", it.AckType, ack.Data.Choices)
	}

	// The command picked reaches the agent: its help, not the gateway's.
	n := len(f.botMessages(id))
	tok = f.slashWith(bob, id, channels.AgentCommandPicker, []slashOpt{{"command", "help", false}}, false)
	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := g.waitAnswer(tok); got != "Sent `/help` to the agent; the answer follows in the thread." {
		t.Errorf("the caller was answered %q, want a private note that it went", got)
	}
	if got := answerText(g.since(id, n)); !strings.Contains(got, "The first word of a prompt picks a scenario") {
		t.Errorf("answer to /agent-command help = %q, want the demo agent's help\n%s", got, g.dump(id))
	}
	// The thread shows who ran what, before the answer.
	if ms := g.since(id, n); len(ms) < 2 || ms[0].Content != "⚙️ Bob ran `/help`." {
		t.Errorf("the thread after /agent-command help, want first Bob's command:\n%s", g.dump(id))
	}
	if n := g.framesWith(`"text":"/help"`); n != 1 {
		t.Errorf("%d frames with the prompt /help, want 1", n)
	}

	// With an input, given before the command.
	n = len(f.botMessages(id))
	f.slashWith(ann, id, channels.AgentCommandPicker, []slashOpt{{"input", "hi there", false}, {"command", "echo", false}}, false)
	g.waitEnd(th)
	if got := answerText(g.since(id, n)); got != "hi there" {
		t.Errorf("answer to /agent-command echo with input = %q, want %q\n%s", got, "hi there", g.dump(id))
	}

	// An input with backticks: the note's code span stays one (a longer
	// fence, as CommonMark allows).
	tok = f.slashWith(ann, id, channels.AgentCommandPicker, []slashOpt{{"input", "run `make` now", false}, {"command", "echo", false}}, false)
	g.waitEnd(th)
	if got, want := g.waitAnswer(tok), "Sent ``/echo run `make` now`` to the agent; the answer follows in the thread."; got != want {
		t.Errorf("the caller was answered %q, want %q", got, want)
	}
}

// Someone who may not prompt gets the refusal from /agent-command, and
// nothing reaches the agent.
func TestAgentCommandPickerRefused(t *testing.T) {
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Users: []string{ann.ID}})
	id := f.say(ann, f.channel, "hello", true)
	g.waitEnd(channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id})
	tok := f.slashWith(bob, id, channels.AgentCommandPicker, []slashOpt{{"command", "help", false}}, false)
	if got := g.waitAnswer(tok); !strings.Contains(got, "don't have access") {
		t.Errorf("Bob was answered %q, want the refusal", got)
	}
	if fu := f.followupsFor(tok); len(fu) != 0 {
		t.Errorf("follow-ups %+v, want the refusal alone", fu)
	}
	for _, m := range f.botMessages(id) {
		if strings.Contains(m.Content, "/help") {
			t.Errorf("the thread shows the refused command: %q", m.Content)
		}
	}
	if n := g.framesWith(`"text":"/help"`); n != 0 {
		t.Errorf("%d frames with the prompt /help, want none", n)
	}
}
