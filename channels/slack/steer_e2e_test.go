package slack

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest/e2e"
)

// Steering the session from Slack: the suite's hands for commands and
// forms (e2e.Driver's Command and Fill).

// Command writes line after the gateway's prefix (Native: "!model
// value") or after a mention of the app (Typed: "@app model value"), in
// the thread. The gateway answers a command privately: Reply reads the
// next private message to who in th.
func (d driver) Command(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, form e2e.CommandForm, line string) e2e.Reply {
	t.Helper()
	o := sayOptions{user: person(who), channel: th.Channel, thread: th.Thread, text: "!" + line}
	if form == e2e.Typed {
		o.text, o.mention = line, true
	}
	reply := d.privateReply(t, ctx, who, th)
	d.f.mustSay(ctx, o)
	return reply
}

// privateReply reads the next private message to who in th, from now.
func (d driver) privateReply(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef) e2e.Reply {
	f := d.f
	private := func() []fakeEphemeral {
		var out []fakeEphemeral
		for _, e := range f.ephemerals {
			if e.User == person(who) && e.Channel == th.Channel && e.ThreadTS == th.Thread {
				out = append(out, e)
			}
		}
		return out
	}
	f.mu.Lock()
	n := len(private())
	f.mu.Unlock()
	return func(sub string) (string, bool) {
		t.Helper()
		var got string
		err := f.waitFor(ctx, "a private message with "+sub, func() bool {
			for _, e := range private()[n:] {
				if strings.Contains(e.Text, sub) {
					got = e.Text
					return true
				}
			}
			return false
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, true
	}
}

// Fill presses Answer, which opens the form's modal, and submits the
// modal with the fields by label; a choice is a select of the modal.
func (d driver) Fill(t *testing.T, ctx context.Context, who e2e.Person, th channels.ThreadRef, m e2e.Message, fields []e2e.Field) {
	t.Helper()
	v := d.openModal(t, ctx, person(who), th, string(m.ID))
	var view struct {
		Blocks []struct {
			Type  string `json:"type"`
			Label struct {
				Text string `json:"text"`
			} `json:"label"`
			Element struct {
				Type    string `json:"type"`
				Options []struct {
					Value string `json:"value"`
				} `json:"options"`
			} `json:"element"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(v.View, &view); err != nil {
		t.Fatalf("modal %s: %v", v.View, err)
	}
	answers := map[string]string{}
	for _, fl := range fields {
		answers[fl.Label] = fl.Value
		if fl.Choices == nil {
			continue
		}
		var values []string
		for _, b := range view.Blocks {
			if b.Type == "input" && b.Label.Text == fl.Label && b.Element.Type == "static_select" {
				for _, o := range b.Element.Options {
					values = append(values, o.Value)
				}
			}
		}
		if !slices.Equal(values, fl.Choices) {
			t.Fatalf("the modal's static_select %q offers %q, want %q: %s", fl.Label, values, fl.Choices, v.View)
		}
	}
	if _, err := d.f.submitView(ctx, v, answers); err != nil {
		t.Fatal(err)
	}
}

// openModal has user press Answer on form message ts until the adapter
// opens its modal, and returns the modal. The adapter knows a form once
// Slack has answered the request that posted it; the fake shows the
// message to the test before that answer arrives, so a test (never a
// person) can press too early and be told the question is no longer
// open.
func (d driver) openModal(t *testing.T, ctx context.Context, user string, th channels.ThreadRef, ts string) fakeView {
	t.Helper()
	f := d.f
	notOpen := func() int {
		n := 0
		for _, e := range f.ephemerals {
			if e.User == user && strings.Contains(e.Text, "no longer open") {
				n++
			}
		}
		return n
	}
	for range 100 {
		f.mu.Lock()
		views, refusals := len(f.views), notOpen()
		f.mu.Unlock()
		if _, err := f.click(ctx, user, th.Channel, ts, formAnswer); err != nil {
			t.Fatal(err)
		}
		err := f.waitFor(ctx, "a modal or a refusal", func() bool { return len(f.views) > views || notOpen() > refusals })
		if err != nil {
			t.Fatal(err)
		}
		if vs := f.openedViews(); len(vs) > views {
			return vs[len(vs)-1]
		}
	}
	t.Fatal("the form never opened")
	return fakeView{}
}
