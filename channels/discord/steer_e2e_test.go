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

// Steering the session from Discord, end to end: the real discordgo
// client against the fake, the session router, and the demo agent as a
// subprocess. What the agent received is read on the agent's side: its
// session file (the demo agent saves a set option before it answers) and
// its replies.

// agentModels returns the model saved in each of the demo agent's
// session files ("" the default).
func (g *gateway) agentModels() []string {
	g.t.Helper()
	files, _ := filepath.Glob(filepath.Join(g.dir, "demo-state", "demo-*.json"))
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			g.t.Fatal(err)
		}
		var r struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			g.t.Fatalf("%s: %v", f, err)
		}
		out = append(out, r.Model)
	}
	return out
}

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

// waitBotText waits for a bot message in channel, after the first n,
// that contains sub, and returns it.
func (g *gateway) waitBotText(channel string, n int, sub string) fakeMessage {
	g.t.Helper()
	var got fakeMessage
	g.f.waitFor(testCtx(g.t), "a message with "+sub, func() bool {
		ms := g.f.botMessagesLocked(channel)
		for i := n; i < len(ms); i++ {
			if strings.Contains(ms[i].Content, sub) {
				got = ms[i]
				return true
			}
		}
		return false
	})
	return got
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

// waitForm waits for a form (a message with an Answer button) in channel
// after the first n.
func (g *gateway) waitForm(channel string, n int) fakeMessage {
	g.t.Helper()
	var got fakeMessage
	g.f.waitFor(testCtx(g.t), "the question's form", func() bool {
		ms := g.f.botMessagesLocked(channel)
		for i := n; i < len(ms); i++ {
			if strings.Contains(string(ms[i].Components), formAnswerID) {
				got = ms[i]
				return true
			}
		}
		return false
	})
	return got
}

const setConfigFrame = `"method":"session/set_config_option"`

// The application command /model and the typed "/model value" reach
// session/set_config_option in the demo agent; a non-operator's /model
// is refused privately and reaches nothing.
func TestSteerModelEndToEnd(t *testing.T) {
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Approvers: []string{ann.ID}})

	id := f.say(ann, f.channel, "hello", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	g.waitEnd(th)
	if got := g.agentModels(); len(got) != 1 || got[0] != "" {
		t.Fatalf("the agent's models at the start = %q, want one session with the default", got)
	}

	// The application command.
	n := len(f.botMessages(id))
	tok := f.slash(ann, id, "model", "model", "demo-smart", false)
	g.waitBotText(id, n, "Ann set the model to Demo Smart.")
	if got := g.agentModels(); len(got) != 1 || got[0] != "demo-smart" {
		t.Fatalf("the agent's models after /model demo-smart = %q, want demo-smart", got)
	}
	if n := g.framesWith(setConfigFrame); n != 1 {
		t.Errorf("%d session/set_config_option requests, want 1", n)
	}
	if it := f.interaction(tok); it.AckType != 5 {
		t.Errorf("the command was acknowledged with type %d, want a deferred answer (5)", it.AckType)
	}

	// A non-operator: a private refusal, nothing reaches the agent.
	tok = f.slash(bob, id, "model", "model", "demo-fast", false)
	if got := g.waitAnswer(tok); !strings.Contains(got, "only operators can use /model") {
		t.Errorf("Bob's /model was answered %q, want the refusal", got)
	}
	if _, _, flags := ackData(t, f, tok); flags&64 == 0 {
		t.Errorf("Bob's refusal has flags %d, want ephemeral (64)", flags)
	}
	// Bob's typed command too.
	n = len(f.botMessages(id))
	f.say(bob, id, "/model demo-fast", false)
	g.waitBotText(id, n, "only operators can use /model")
	if got := g.agentModels(); len(got) != 1 || got[0] != "demo-smart" {
		t.Errorf("the agent's models after Bob's /model = %q, want demo-smart still", got)
	}
	if n := g.framesWith(setConfigFrame); n != 1 {
		t.Errorf("%d session/set_config_option requests after Bob's /model, want 1", n)
	}

	// The same command typed in the thread.
	n = len(f.botMessages(id))
	f.say(ann, id, "/model demo-fast", false)
	g.waitBotText(id, n, "Ann set the model to Demo Fast.")
	if got := g.agentModels(); len(got) != 1 || got[0] != "demo-fast" {
		t.Fatalf("the agent's models after the typed /model demo-fast = %q, want demo-fast", got)
	}
	if n := g.framesWith(setConfigFrame); n != 2 {
		t.Errorf("%d session/set_config_option requests, want 2", n)
	}

	// /status shows what the agent reported back.
	tok = f.slash(bob, id, "status", "", "", false)
	if got := g.waitAnswer(tok); !strings.Contains(got, "Demo Fast") {
		t.Errorf("/status = %q, want the model Demo Fast", got)
	}
}

// An agent's questions answered on Discord: a select and Answer answer a
// choice, the modal a text question; the agent's reply says the answer.
func TestSteerQuestionsEndToEnd(t *testing.T) {
	f := newFake(t)
	g := newGateway(t, f, session.AccessRule{Guilds: []string{f.guild}, Approvers: []string{ann.ID}})

	id := f.say(ann, f.channel, "ask-choice", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	form := g.waitForm(id, 0)
	menu, values, ok := selectMenu(form)
	if !ok || strings.Join(values, ",") != "red,green,blue" {
		t.Fatalf("the choice's select = %q %q, want the colours (components %s)", menu, values, form.Components)
	}
	f.pick(ann, id, form.ID, menu, "green")
	f.click(ann, id, form.ID, formAnswerID)
	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := answerText(g.since(id, 0)); !strings.Contains(got, "You chose green.") {
		t.Errorf("answer = %q, want the agent to say green\n%s", got, g.dump(id))
	}

	n := len(f.botMessages(id))
	f.say(ann, id, "ask-text", false)
	form = g.waitForm(id, n)
	tok := f.click(ann, id, form.ID, formAnswerID)
	f.waitFor(testCtx(t), "the modal", func() bool { return !f.interactions[tok].Acked.IsZero() })
	modalID, inputs := modalLabels(t, f, tok)
	name, retries := inputs["Release name"], inputs["Retries"]
	if typ, content, _ := ackData(t, f, tok); typ != 9 || name == "" || retries == "" {
		t.Fatalf("Answer was answered with type %d %q and inputs %q, want a modal with the name and the retries", typ, content, inputs)
	}
	f.submit(ann, id, form.ID, modalID, map[string]string{name: "Aurora", retries: "3"})
	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	if got := answerText(g.since(id, n)); !strings.Contains(got, "Release Aurora with 3 retries.") {
		t.Errorf("answer = %q, want the agent to echo the release\n%s", got, g.dump(id))
	}
}

// modalLabels returns the custom id of the modal interaction token was
// answered with, and its text inputs' custom ids by label.
func modalLabels(t *testing.T, f *fakeDiscord, token string) (string, map[string]string) {
	t.Helper()
	var b struct {
		Data struct {
			CustomID   string `json:"custom_id"`
			Components []struct {
				Components []struct {
					CustomID string `json:"custom_id"`
					Label    string `json:"label"`
				} `json:"components"`
			} `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(f.interaction(token).AckBody, &b); err != nil {
		t.Fatalf("modal %s: %v", f.interaction(token).AckBody, err)
	}
	out := map[string]string{}
	for _, r := range b.Data.Components {
		for _, c := range r.Components {
			out[c.Label] = c.CustomID
		}
	}
	return b.Data.CustomID, out
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
