package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/thread"
)

// option returns the button id of the prompt op whose ACP option is acpID.
func option(t *testing.T, op channeltest.Op, acpID string) string {
	t.Helper()
	for _, o := range op.Options {
		if strings.HasSuffix(o, "/"+acpID) {
			return o
		}
	}
	t.Fatalf("prompt %v has no option %s", op.Options, acpID)
	return ""
}

func TestPermissionAllowAndReject(t *testing.T) {
	for _, tc := range []struct {
		choose string
		reply  string
		mark   string
	}{
		{"allow_once", "Applied the edit.", "✅ Allow — chosen by Ann"},
		{"reject_once", "Okay, I left main.go alone.", "❌ Reject — chosen by Ann"},
	} {
		t.Run(tc.choose, func(t *testing.T) {
			e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Typing: true, Prompt: true}})
			th := e.rec.Thread("p")
			e.say(th, ann, "permission")
			op := e.waitOp(th, "the permission prompt", isPrompt)
			// The request came before its tool_call and still renders fully.
			for _, want := range []string{"Permission needed", "Edit main.go", "(edit)", "```diff", "main.go"} {
				if !strings.Contains(op.Text, want) {
					t.Errorf("prompt text lacks %q:\n%s", want, op.Text)
				}
			}
			h := channels.Handle{Thread: th, ID: op.Msg}
			if err := e.rec.Click(e.ctx(), ann, h, option(t, op, tc.choose)); err != nil {
				t.Fatalf("click: %v", err)
			}
			end := e.waitEnd(th)
			if end.StopReason != "end_turn" {
				t.Errorf("stop reason %q", end.StopReason)
			}
			if !strings.Contains(e.text(th), tc.reply) {
				t.Errorf("text %q lacks %q", e.text(th), tc.reply)
			}
			m, _ := e.rec.Message(op.Msg)
			if !strings.Contains(m.Text, tc.mark) || m.Options != nil {
				t.Errorf("answered prompt = %q with buttons %v, want it to say %q without buttons", m.Text, m.Options, tc.mark)
			}
			p, ok, err := e.st.Prompt(e.ctx(), strings.Split(op.Options[0], "/")[0])
			if err != nil || !ok || p.Chosen != tc.choose || p.ChosenBy != ann.ID || p.MessageID != string(op.Msg) {
				t.Errorf("stored prompt = %+v, %v, %v", p, ok, err)
			}
		})
	}
}

func TestPermissionOnlyApprovers(t *testing.T) {
	access := map[string]session.AccessRule{"web": {Channels: []string{"c"}, Approvers: []string{ann.ID}}}
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}, access: access})
	th := e.rec.Thread("p")
	e.say(th, bob, "permission")
	op := e.waitOp(th, "the permission prompt", isPrompt)
	h := channels.Handle{Thread: th, ID: op.Msg}
	if err := e.rec.Click(e.ctx(), bob, h, option(t, op, "allow_once")); err != nil {
		t.Fatalf("click: %v", err)
	}
	e.waitOp(th, "the refusal", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, "only approvers")
	})
	if m, _ := e.rec.Message(op.Msg); m.Options == nil {
		t.Fatal("the prompt lost its buttons after a refused click")
	}
	if err := e.rec.Click(e.ctx(), ann, h, option(t, op, "reject_once")); err != nil {
		t.Fatalf("click: %v", err)
	}
	e.waitEnd(th)
	if !strings.Contains(e.text(th), "Okay, I left main.go alone.") {
		t.Errorf("text = %q; want the approver's reject", e.text(th))
	}
}

func TestPermissionTimeoutRejects(t *testing.T) {
	p := session.DefaultPolicy()
	p.Permissions.Timeout = 300 * time.Millisecond
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}, policy: &p})
	th := e.rec.Thread("p")
	e.say(th, ann, "permission")
	op := e.waitOp(th, "the permission prompt", isPrompt)
	e.waitEnd(th)
	if !strings.Contains(e.text(th), "Okay, I left main.go alone.") {
		t.Errorf("text = %q; an expired prompt answers with the reject option", e.text(th))
	}
	m, _ := e.rec.Message(op.Msg)
	if !strings.Contains(m.Text, "Expired after") || m.Options != nil {
		t.Errorf("expired prompt = %q, buttons %v", m.Text, m.Options)
	}
	// A late click finds the prompt gone: the buttons were removed, and
	// the router answers a stale button id with "no longer waiting".
	e.rec.Deliver(e.ctx(), channels.Inbound{Thread: th, Author: ann, Choice: &channels.ChoiceAnswer{Prompt: channels.Handle{Thread: th, ID: op.Msg}, OptionID: op.Options[0]}, Reply: e.rec.ReplyFunc(th)})
	e.waitOp(th, "the stale-click answer", func(op channeltest.Op) bool {
		return op.Op == "reply" && strings.Contains(op.Text, "no longer waiting")
	})
}

func TestPermissionByNumberWithoutButtons(t *testing.T) {
	e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true}})
	th := e.rec.Thread("p")
	e.say(th, ann, "permission")
	op := e.waitOp(th, "the numbered prompt", hasText("Reply with the number of your choice"))
	if !strings.Contains(op.Text, "1. Allow") || !strings.Contains(op.Text, "3. Reject") {
		t.Fatalf("numbered prompt:\n%s", op.Text)
	}
	e.say(th, ann, "3")
	e.waitEnd(th)
	if !strings.Contains(e.text(th), "Okay, I left main.go alone.") {
		t.Errorf("text = %q", e.text(th))
	}
	m, _ := e.rec.Message(op.Msg)
	if !strings.Contains(m.Text, "Reject — chosen by Ann") {
		t.Errorf("answered prompt = %q", m.Text)
	}
}

func TestPermissionPolicies(t *testing.T) {
	for _, tc := range []struct{ policy, reply, notice string }{
		{thread.PermissionApproveAll, "Applied the edit.", "Allowed by policy approve-all"},
		{thread.PermissionDenyAll, "Okay, I left main.go alone.", "Rejected by policy deny-all"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			p := session.DefaultPolicy()
			p.Permissions.Policy = tc.policy
			e := newEnv(t, envOptions{rec: channeltest.Options{Edit: true, Prompt: true}, policy: &p})
			th := e.rec.Thread("p")
			e.say(th, ann, "permission")
			e.waitEnd(th)
			if !strings.Contains(e.text(th), tc.reply) {
				t.Errorf("text = %q", e.text(th))
			}
			if len(e.messages(th, channels.KindPermission)) != 0 {
				t.Error("a prompt was shown under an automatic policy")
			}
			e.waitOp(th, "the policy notice", hasText(tc.notice))
		})
	}
}
