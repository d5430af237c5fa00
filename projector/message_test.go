package projector

import "testing"

// TestMessageShareTheTurnBudget: text the agent posts (send_message)
// comes in order with the turn's text, counts against maxTurnChars, and
// the one truncation notice covers both.
func TestMessageShareTheTurnBudget(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MaxTurnChars = 12 }))
	out := p.BeginTurn(nil)
	out = p.Apply(msg("before "), out)
	out = p.Message("a posted message", out)
	out = p.Message("another", out)
	out = p.Apply(msg(" after"), out)
	out = p.EndTurn("end_turn", "", out)
	if got, want := textOf(out), "before a pos"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	n := 0
	for _, o := range out {
		if nt, ok := o.(Notice); ok && nt.Reason == NoticeTruncated {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d truncation notices, want 1: %v", n, brief(out))
	}
	if tx, ok := out[1].(Text); !ok || tx.Text != "a pos" || !tx.NewMessage {
		t.Errorf("posted message = %#v, want a new message cut to the budget", out[1])
	}
	if got := p.TurnText(); got != "" {
		t.Errorf("turn text after the end = %q", got)
	}
}

// TestMessageWithinBudget: under the budget the message is whole and
// later text still shows; outside a turn it shows nothing (the
// agent's own text neither: no turn, no budget to hold it).
func TestMessageWithinBudget(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MaxTurnChars = 100 }))
	out := p.BeginTurn(nil)
	out = p.Apply(msg("before "), out)
	out = p.Message("posted", out)
	out = p.Apply(msg(" after"), out)
	if got, want := textOf(out), "before posted after"; got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if p.TurnText() != "before  after" {
		t.Errorf("turn text = %q, want the streamed text only", p.TurnText())
	}
	p.EndTurn("end_turn", "", nil)
	if got := p.Message("outside", nil); len(got) != 0 {
		t.Errorf("outside a turn = %v, want nothing", brief(got))
	}
}

// TestMessageIsAMessageOfItsOwn: a posted message starts a new message,
// and the turn's text after it starts another (it does not run on into
// the posted text).
func TestMessageIsAMessageOfItsOwn(t *testing.T) {
	p := New(settings(func(s *Settings) { s.MaxTurnChars = 100 }))
	out := p.BeginTurn(nil)
	out = p.Apply(msg("before"), out)
	out = p.Message("posted", out)
	out = p.Apply(msg("after"), out)
	out = p.Apply(msg(" more"), out)
	var got []Text
	for _, o := range out {
		if tx, ok := o.(Text); ok {
			got = append(got, tx)
		}
	}
	want := []Text{{Text: "before"}, {Text: "posted", NewMessage: true}, {Text: "after", NewMessage: true}, {Text: " more"}}
	if len(got) != len(want) {
		t.Fatalf("texts = %#v, want %#v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("text %d = %#v, want %#v", i, got[i], want[i])
		}
	}
}
