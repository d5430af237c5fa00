package discord

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/session"
)

// toolStorm runs a turn through the real lane and adapter into the fake,
// in virtual time with Discord's rate limits: a sentence, twelve tool
// calls that start and finish 150 ms apart, a permission prompt while the
// seventh runs, and a closing sentence. It returns the bot's messages.
func toolStorm(t *testing.T, style string) (*fakeDiscord, []fakeMessage) {
	f := newFake(t)
	clock := newClock()
	f.limitRates(clock.now)
	a := f.adapter(t, Options{ToolStyle: style})
	withClock(t, a, clock)
	d := newLaneDriver(t, a, f.threadRef(), clock)
	d.lane.BeginTurn(clock.now())
	d.push(projector.Text{Text: "Let me look around."})
	for i := range 12 {
		id := projector.ToolCallID(fmt.Sprintf("call_%d", i))
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Read file%d.go · running", i), First: true})
		if i == 6 {
			d.lane.Prompt(clock.now(), "perm", channels.Choice{Text: "Allow Read file6.go?", Options: []channels.Option{
				{ID: "allow", Label: "Allow", Style: "primary"}, {ID: "deny", Label: "Deny", Style: "danger"},
			}}, nil)
			d.step()
		}
		d.wait(150 * time.Millisecond)
		d.push(projector.Tool{ID: id, Text: fmt.Sprintf("🛠️ Read file%d.go · done", i)})
		d.wait(150 * time.Millisecond)
	}
	d.push(projector.Text{Text: "\n\nAll read."})
	d.push(projector.TurnEnd{StopReason: "end_turn"})
	d.settle()
	if n := f.tooManyRequests(); n != 0 {
		t.Errorf("Discord answered %d requests with 429; want none", n)
	}
	return f, f.botMessages(f.thread)
}

// TestToolStormIsOneCard: with toolStyle card, a turn of twelve tool calls
// shows them as the rows of one Components V2 message, edited in place at
// most once a second, with the permission prompt's buttons below it and
// the text in classic messages around it; with lines it takes twelve
// messages.
func TestToolStormIsOneCard(t *testing.T) {
	f, msgs := toolStorm(t, ToolCard)
	var kinds []string
	var card fakeMessage
	for _, m := range msgs {
		rows, isCard := cardRows(m)
		switch {
		case isCard:
			kinds = append(kinds, "card")
			card = m
			if m.Content != "" {
				t.Errorf("the card carries content %q", m.Content)
			}
			var want []string
			for i := range 12 {
				want = append(want, fmt.Sprintf("🛠️ Read file%d.go · done", i))
			}
			if strings.Join(rows, "\n") != strings.Join(want, "\n") {
				t.Errorf("the card's rows are\n%s\nwant\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
			}
		case hasButtons(m):
			kinds = append(kinds, "prompt")
		default:
			kinds = append(kinds, strings.TrimSpace(m.Content))
		}
	}
	if got, want := strings.Join(kinds, " | "), "Let me look around. | card | prompt | All read."; got != want {
		t.Fatalf("the thread shows %q, want %q", got, want)
	}
	edits := f.requestsMatching("PATCH", "/messages/"+card.ID)
	if len(edits) == 0 {
		t.Fatal("the card was never edited")
	}
	for i := 1; i < len(edits); i++ {
		if gap := edits[i].At.Sub(edits[i-1].At); gap < time.Second {
			t.Errorf("card edits %d and %d came %v apart; want at least 1s", i-1, i, gap)
		}
	}
	if posts := len(f.requestsMatching("POST", "/channels/"+f.thread+"/messages")); posts != 4 {
		t.Errorf("%d posts, want 4 (text, card, prompt, text)", posts)
	}

	_, lines := toolStorm(t, ToolLines)
	tools := 0
	for _, m := range lines {
		if _, isCard := cardRows(m); isCard {
			t.Errorf("toolStyle lines posted a card")
		}
		if strings.HasPrefix(m.Content, "🛠️") {
			tools++
		}
	}
	if tools != 12 {
		t.Errorf("toolStyle lines posted %d tool messages, want 12", tools)
	}
}

// hasButtons reports whether m carries buttons.
func hasButtons(m fakeMessage) bool {
	var rows []fakeComponent
	if json.Unmarshal(m.Components, &rows) != nil {
		return false
	}
	for _, r := range rows {
		for _, c := range r.Components {
			if c.Type == 2 {
				return true
			}
		}
	}
	return false
}

// TestCardFitsDiscordsLimits posts and edits a card of more rows and text
// than a Components V2 message holds: the fake (which refuses what Discord
// refuses) takes it, and it shows the newest rows and a count of the rest.
func TestCardFitsDiscordsLimits(t *testing.T) {
	f := newFake(t)
	a := f.adapter(t, Options{ToolStyle: ToolCard})
	ctx := testCtx(t)
	var rows []channels.Message
	for i := range 60 {
		rows = append(rows, channels.Message{Kind: channels.KindTool, Key: fmt.Sprint(i), Text: fmt.Sprintf("🛠️ step %d %s", i, strings.Repeat("x", 90))})
	}
	h, err := a.Card(ctx, f.threadRef(), channels.Handle{}, rows[:3])
	if err != nil {
		t.Fatalf("Card (new): %v", err)
	}
	if _, err := a.Card(ctx, f.threadRef(), h, rows); err != nil {
		t.Fatalf("Card (edit): %v", err)
	}
	m, _ := f.message(string(h.ID))
	got, ok := cardRows(m)
	if !ok || len(got) < 2 {
		t.Fatalf("message %s is not a card of rows: %+v", h.ID, m)
	}
	if !strings.Contains(got[0], "earlier tool calls") || !strings.HasPrefix(got[len(got)-1], "🛠️ step 59 ") {
		t.Errorf("card rows start %q and end %q; want a count of the hidden rows, then the newest", got[0], got[len(got)-1])
	}
}

// TestFakeChecksComponentsV2 holds the fake to Discord's rules of
// Components V2 messages, which the card tests rely on.
func TestFakeChecksComponentsV2(t *testing.T) {
	content := "hello"
	empty := ""
	card := json.RawMessage(`[{"type":17,"components":[{"type":10,"content":"row"}]}]`)
	for _, c := range []struct {
		name    string
		flags   int
		content *string
		comps   json.RawMessage
		ok      bool
	}{
		{"card", flagComponentsV2, nil, card, true},
		{"card with empty content", flagComponentsV2, &empty, card, true},
		{"card with content", flagComponentsV2, &content, card, false},
		{"card without the flag", 0, nil, card, false},
		{"buttons", 0, &content, json.RawMessage(`[{"type":1,"components":[{"type":2,"custom_id":"a"}]}]`), true},
		{"empty text display", flagComponentsV2, nil, json.RawMessage(`[{"type":17,"components":[{"type":10,"content":""}]}]`), false},
		{"text too long", flagComponentsV2, nil, json.RawMessage(`[{"type":10,"content":"` + strings.Repeat("x", 4001) + `"}]`), false},
	} {
		if msg := checkComponents(c.flags, c.content, c.comps); (msg == "") != c.ok {
			t.Errorf("%s: checkComponents = %q, want ok=%v", c.name, msg, c.ok)
		}
	}
}

// TestEndToEndCard runs the demo agent's tools scenario through the whole
// gateway with toolStyle card: each run of tool calls between the agent's
// texts is one card, the texts are classic messages in order between them,
// and each card is edited in place until its row shows how the tool ended.
func TestEndToEndCard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	f := newFake(t)
	g := newGatewayWith(t, f, session.AccessRule{Guilds: []string{f.guild}}, Options{ToolStyle: ToolCard})
	id := f.say(ann, f.channel, "tools", true)
	th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	if got := g.waitEnd(th); got != "end_turn" {
		t.Fatalf("stop reason %q", got)
	}
	var shape []string
	var cards [][]string
	edits := 0
	for _, m := range f.botMessages(id) {
		if rows, ok := cardRows(m); ok {
			shape = append(shape, "card")
			cards = append(cards, rows)
			edits += m.Edits
			continue
		}
		if strings.TrimSpace(m.Content) != "" {
			shape = append(shape, "text")
		}
	}
	if got, want := strings.Join(shape, " "), "text card text card text card text"; got != want {
		t.Fatalf("the thread shows %q, want %q:\n%s", got, want, g.dump(id))
	}
	for i, want := range []string{"Run ls -la · done", "Read main.go · done", "go test ./... · failed"} {
		if len(cards[i]) != 1 || !strings.HasSuffix(cards[i][0], want) {
			t.Errorf("card %d rows = %q, want one row ending %q", i, cards[i], want)
		}
	}
	if edits == 0 {
		t.Errorf("no card was edited as its tool ran:\n%s", g.dump(id))
	}
}
