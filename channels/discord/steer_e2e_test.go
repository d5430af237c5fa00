package discord

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest/e2e"
)

// Steering the session from Discord: the suite's hands for commands and
// forms (e2e.Driver's Command and Fill).

// Command gives line as the application command of its first word, its
// option of that name the rest (Native), or writes it after a slash in
// the thread (Typed). An application command is acknowledged at once
// with a deferred private answer, which Reply reads; a typed one Discord
// cannot answer privately, so its answer is the bot's next message in
// the thread.
func (d driver) Command(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, form e2e.CommandForm, line string) e2e.Reply {
	t.Helper()
	f := d.f
	if form == e2e.Typed {
		n := len(f.botMessages(th.Thread))
		f.say(person(who), th.Thread, "/"+line, false)
		return func(sub string) (string, bool) {
			t.Helper()
			var got string
			f.waitFor(ctx, "a message with "+sub, func() bool {
				ms := f.botMessagesLocked(th.Thread)
				for i := n; i < len(ms); i++ {
					if strings.Contains(ms[i].Content, sub) {
						got = ms[i].Content
						return true
					}
				}
				return false
			})
			return got, false
		}
	}
	name, arg, _ := strings.Cut(line, " ")
	opt := ""
	if arg != "" {
		opt = name
	}
	tok := f.slash(person(who), th.Thread, name, opt, arg, false)
	f.waitFor(ctx, "the command's acknowledgement", func() bool { return !f.interactions[tok].Acked.IsZero() })
	if typ, _, flags := ackData(t, f, tok); typ != 5 || flags&64 == 0 {
		t.Errorf("/%s was acknowledged with type %d, flags %d, want a deferred (5) ephemeral (64) answer", name, typ, flags)
	}
	return func(sub string) (string, bool) {
		t.Helper()
		var got string
		f.waitFor(ctx, "the answer to /"+name, func() bool {
			if in := f.interactions[tok]; in != nil && in.Original != nil {
				got = *in.Original
				return true
			}
			return false
		})
		if !strings.Contains(got, sub) {
			t.Errorf("/%s was answered %q, want %q in it", name, got, sub)
		}
		return got, true
	}
}

// Fill picks each choice in the message's select, then presses Answer:
// with text fields, that opens the modal (an interaction answered with
// type 9), whose inputs are filled by label and submitted.
func (d driver) Fill(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, m e2e.Message, fields []e2e.Field) {
	t.Helper()
	f := d.f
	fm, ok := f.message(string(m.ID))
	if !ok {
		t.Fatalf("no message %s to answer", m.ID)
	}
	var texts []e2e.Field
	for _, fl := range fields {
		if fl.Choices == nil {
			texts = append(texts, fl)
			continue
		}
		menu, values, ok := selectMenu(fm)
		if !ok || !slices.Equal(values, fl.Choices) {
			t.Fatalf("the choice's select = %q %q, want %q (components %s)", menu, values, fl.Choices, fm.Components)
		}
		f.pick(person(who), th.Thread, fm.ID, menu, fl.Value)
	}
	tok := f.click(person(who), th.Thread, fm.ID, formAnswerID)
	if texts == nil {
		return
	}
	f.waitFor(ctx, "the modal", func() bool { return !f.interactions[tok].Acked.IsZero() })
	modalID, inputs := modalLabels(t, f, tok)
	values := map[string]string{}
	for _, fl := range texts {
		if inputs[fl.Label] == "" {
			typ, content, _ := ackData(t, f, tok)
			t.Fatalf("Answer was answered with type %d %q and inputs %q, want a modal with %q", typ, content, inputs, fl.Label)
		}
		values[inputs[fl.Label]] = fl.Value
	}
	if typ, content, _ := ackData(t, f, tok); typ != 9 {
		t.Fatalf("Answer was answered with type %d %q, want a modal", typ, content)
	}
	f.submit(person(who), th.Thread, fm.ID, modalID, values)
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
