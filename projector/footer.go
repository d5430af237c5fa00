package projector

import (
	"fmt"
	"strings"
	"time"

	"github.com/acpgw/gateway/sysmsg"
)

// FooterTag is the Status tag of the turn's footer line.
const FooterTag = "footer"

// footer renders the compact line that ends a turn, e.g.
//
//	⏱ 2m 40s · 🛠 23 tools · 31k tokens · 42% context · $0.21
//
// with only the parts known: the time when the caller measured it, the
// tool calls when the turn had any, and tokens, context share and cost
// when the agent reported them in this turn (usage_update). The tokens
// are the context window's tokens in use; the cost is what the agent
// reports, which ACP defines as the session's so far. "" when nothing is
// known.
func (p *Projector) footer(elapsed time.Duration) string {
	t := &p.turn
	var parts []string
	if elapsed >= 0 {
		parts = append(parts, "⏱ "+formatElapsed(elapsed))
	}
	switch n := len(t.order); n {
	case 0:
	case 1:
		parts = append(parts, "🛠 1 tool")
	default:
		parts = append(parts, fmt.Sprintf("🛠 %d tools", n))
	}
	if t.usageFrames > 0 {
		u := t.usage
		if u.UsedKnown {
			parts = append(parts, formatTokens(u.Used)+" tokens")
			if u.SizeKnown && u.Size > 0 {
				parts = append(parts, sysmsg.Share(u.Used, u.Size)+" context")
			}
		}
		if u.CostKnown {
			parts = append(parts, formatCost(u.Cost, u.Currency))
		}
	}
	return strings.Join(parts, " · ")
}

// formatElapsed reads a duration the way people say it: "12s",
// "2m 40s", "1h 5m".
func formatElapsed(d time.Duration) string {
	d = d.Round(time.Second)
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case h > 0:
		return fmt.Sprintf("%dh %dm", h, m)
	case m > 0:
		return fmt.Sprintf("%dm %ds", m, s)
	}
	return fmt.Sprintf("%ds", s)
}

// formatTokens shortens a token count: "850", "4.2k", "31k", "1.2M".
func formatTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 10_000:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1000)) + "k"
	case n < 1_000_000:
		return fmt.Sprintf("%dk", n/1000)
	}
	return trimZero(fmt.Sprintf("%.1f", float64(n)/1_000_000)) + "M"
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
