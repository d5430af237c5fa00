package dispatch_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

var words = []string{
	"the", "agent", "runs", "a", "tool", "and", "reads", "files", "café", "naïve", "über",
	"你好", "世界", "👩‍💻", "🇩🇪", "e\u0301", "ok.", "done!", "why?", "x", "retry", "queue",
	"-", "*", "1.", "`code`", "**bold**",
}

// genText builds a random text of about n words with sentences, lines and
// paragraphs, ending in a non-space.
func genText(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(words[r.IntN(len(words))])
		switch x := r.IntN(20); {
		case x == 0:
			b.WriteString("\n\n")
		case x == 1:
			b.WriteString("\n")
		case x == 2:
			b.WriteString(". ")
		default:
			b.WriteString(" ")
		}
	}
	b.WriteString("end")
	return b.String()
}

// chunk cuts s at random rune boundaries into pieces of 1..max runes.
func chunk(r *rand.Rand, s string, max int) []string {
	var out []string
	for s != "" {
		n := 1 + r.IntN(max)
		i := 0
		for k := 0; k < n && i < len(s); k++ {
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}

type step struct {
	update *projector.Update
	wait   time.Duration
}

// TestPropertyNothingLostNothingDoubled: for random streams (deltas or
// snapshots, random chunking, tools between text, random limits, edit or
// not, draft or blocks, both delivery modes, rate limits injected) under
// the turn budget, the delivered text equals the agent's text exactly and
// text before a tool call is delivered before that tool's line.
func TestPropertyNothingLostNothingDoubled(t *testing.T) {
	iterations := 400
	if testing.Short() {
		iterations = 50
	}
	ambiguous := 0
	for seed := range uint64(iterations) {
		r := rand.New(rand.NewPCG(seed, 42))
		snapshots := r.IntN(3) == 0
		segments := 1 + r.IntN(4)
		var steps []step
		var want strings.Builder
		var wantOrder []string // text-so-far length at each tool, for the order check
		tools := 0
		maxChunk := 1 + r.IntN(40)
		for s := range segments {
			text := genText(r, 5+r.IntN(120))
			switch x := r.IntN(6); {
			case s > 0 && x < 3:
				text = "\n\n" + text
			case s > 0 && s < segments-1 && x == 3:
				text = "\n\n" // whitespace alone between two tools
			}
			pieces := chunk(r, text, maxChunk)
			if !snapshots && ambiguousDeltas(pieces) {
				ambiguous++
				pieces = []string{text}
			}
			msgID := ""
			if snapshots {
				msgID = fmt.Sprintf("msg%d", s)
			}
			acc := ""
			for _, p := range pieces {
				acc += p
				c := p
				if snapshots {
					c = acc
				}
				steps = append(steps, step{update: &projector.Update{Tag: projector.TagAgentMessageChunk, RawTag: "agent_message_chunk", Text: c, MessageID: msgID}, wait: time.Duration(r.IntN(400)) * time.Millisecond})
			}
			want.WriteString(text)
			if s < segments-1 {
				id := projector.ToolCallID(fmt.Sprintf("call_%d", tools))
				tools++
				wantOrder = append(wantOrder, want.String())
				steps = append(steps,
					step{update: &projector.Update{Tag: projector.TagToolCall, Tool: projector.ToolUpdate{ID: id, Title: "step " + string(id), HasTitle: true, Kind: "execute", Status: projector.StatusInProgress, RawInput: []byte(`{"command":"x"}`)}}},
					step{update: &projector.Update{Tag: projector.TagToolCallUpdate, Tool: projector.ToolUpdate{ID: id, Status: projector.StatusCompleted}}, wait: time.Duration(r.IntN(3000)) * time.Millisecond},
				)
			}
		}
		settings := projector.DefaultSettings()
		settings.MaxTurnChars = 1 << 20
		if r.IntN(2) == 0 {
			settings.DeliveryMode = projector.DeliveryFinalOnly
		}
		if r.IntN(3) == 0 {
			settings.LiveText = projector.LiveBlocks
		}
		limits := channels.Limits{MinEditInterval: time.Duration(r.IntN(1500)) * time.Millisecond}
		if r.IntN(4) != 0 {
			limits.MaxMessageChars = 60 + r.IntN(2000)
		}
		if r.IntN(3) == 0 {
			limits.MaxLines = 3 + r.IntN(20)
		}
		if r.IntN(3) == 0 {
			limits.MinPostInterval = time.Duration(r.IntN(1200)) * time.Millisecond
		}
		edit := r.IntN(3) != 0
		name := fmt.Sprintf("seed=%d snapshots=%v edit=%v mode=%s live=%s limits=%+v", seed, snapshots, edit, settings.DeliveryMode, settings.LiveText, limits)

		rec := channeltest.New(channeltest.Options{Edit: edit, Limits: limits})
		for range r.IntN(4) {
			op := channeltest.InjectPost
			if edit && r.IntN(2) == 0 {
				op = channeltest.InjectEdit
			}
			rec.Inject(op, &channels.RateLimitError{RetryAfter: time.Duration(1+r.IntN(3000)) * time.Millisecond})
		}
		thread := rec.Thread("t")
		lane := dispatch.NewLane(dispatch.Options{Adapter: rec.Adapter(), Thread: thread, Stream: settings, Typing: typing.DefaultConfig()})
		proj := projector.New(settings)
		now := time.Unix(0, 0)
		var next time.Time
		advance := func(d time.Duration) {
			target := now.Add(d)
			for !next.IsZero() && !next.After(target) {
				now = next
				next = lane.Step(t.Context(), now)
			}
			now = target
			next = lane.Step(t.Context(), now)
		}
		var outs []projector.Output
		outs = proj.BeginTurn(outs[:0])
		lane.BeginTurn(now)
		lane.Push(now, outs...)
		for _, st := range steps {
			advance(st.wait)
			outs = proj.Apply(st.update, outs[:0])
			lane.Push(now, outs...)
			next = lane.Step(t.Context(), now)
		}
		outs = proj.EndTurn("end_turn", "", outs[:0])
		lane.Push(now, outs...)
		next = lane.Step(t.Context(), now)
		for i := 0; !next.IsZero(); i++ {
			if i > 100000 {
				t.Fatalf("%s: lane never drained", name)
			}
			now = next
			next = lane.Step(t.Context(), now)
		}
		if !lane.Idle() {
			t.Fatalf("%s: lane not idle after draining", name)
		}

		var got strings.Builder
		var order []string
		for _, m := range rec.Messages() {
			switch m.Kind {
			case channels.KindText:
				got.WriteString(m.Text)
			case channels.KindTool:
				order = append(order, got.String())
			}
		}
		if got.String() != want.String() {
			t.Fatalf("%s:\ndelivered %q\n     want %q", name, got.String(), want.String())
		}
		// In a channel that edits, each tool has one message, posted after
		// all text before it.
		if edit && len(order) == len(wantOrder) {
			for i := range order {
				// Whitespace alone is carried past a tool line (it cannot be
				// posted on its own), so compare without trailing space.
				if strings.TrimRight(order[i], " \n") != strings.TrimRight(wantOrder[i], " \n") {
					t.Fatalf("%s: tool %d posted after text %q, want after %q", name, i, order[i], wantOrder[i])
				}
			}
		} else if edit {
			t.Fatalf("%s: %d tool messages, want %d", name, len(order), len(wantOrder))
		}
	}
	t.Logf("%d of %d delta streams were ambiguous with snapshots and sent as one chunk", ambiguous, iterations)
}

// ambiguousDeltas reports a delta chunking that no reader can tell from a
// snapshot stream (the second chunk starts with the whole first one) or
// that repeats a long chunk exactly (read as a re-send).
func ambiguousDeltas(pieces []string) bool {
	if len(pieces) > 1 && len(pieces[1]) > len(pieces[0]) && strings.HasPrefix(pieces[1], pieces[0]) {
		return true
	}
	for i := 1; i < len(pieces); i++ {
		if pieces[i] == pieces[i-1] && utf8.RuneCountInString(pieces[i]) >= projector.LongRepeatRunes {
			return true
		}
	}
	return false
}
