package discord

import (
	"fmt"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/session"
)

// TestEndToEndToolStormIsOneCard: with the whole gateway and the demo
// agent, a turn that reads twelve files in a row shows them as the rows
// of one card message (toolStyle card), each row ended, with the text
// before and after it in classic messages; with toolStyle lines the same
// turn takes twelve tool messages.
func TestEndToEndToolStormIsOneCard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts agent processes")
	}
	var want []string
	for i := range 12 {
		want = append(want, fmt.Sprintf("Read file%d.go · done", i))
	}
	for _, style := range []string{ToolCard, ToolLines} {
		t.Run(style, func(t *testing.T) {
			f := newFake(t)
			g := newGatewayWith(t, f, session.AccessRule{Guilds: []string{f.guild}}, Options{ToolStyle: style})
			id := f.say(ann, f.channel, "storm", true)
			th := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
			if got := g.waitEnd(th); got != "end_turn" {
				t.Fatalf("stop reason %q", got)
			}
			var shape, rows, lines []string
			for _, m := range f.botMessages(id) {
				if r, ok := cardRows(m); ok {
					shape = append(shape, "card")
					rows = append(rows, r...)
					continue
				}
				switch c := strings.TrimSpace(m.Content); {
				case strings.Contains(c, "Read file"):
					shape = append(shape, "tool")
					lines = append(lines, c)
				case c != "":
					shape = append(shape, c)
				}
			}
			wantShape := "Let me look around. | card | All read."
			got := rows
			if style == ToolLines {
				wantShape = "Let me look around. | " + strings.Repeat("tool | ", 12) + "All read."
				got = lines
			}
			if s := strings.Join(shape, " | "); s != wantShape {
				t.Fatalf("the thread shows %q, want %q:\n%s", s, wantShape, g.dump(id))
			}
			if len(got) != len(want) {
				t.Fatalf("tool rows %q, want %d", got, len(want))
			}
			for i := range want {
				if !strings.HasSuffix(got[i], want[i]) {
					t.Errorf("tool %d shows %q, want it to end %q", i, got[i], want[i])
				}
			}
		})
	}
}
