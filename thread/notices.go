package thread

import (
	"errors"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// DisplayName is how a thread names a person in its notices.
func DisplayName(a channels.Author) string { return sysmsg.Who(a.Name, a.ID) }

func displayName(a channels.Author) string { return DisplayName(a) }

// SamePrompt reports whether a and b are the same message.
func SamePrompt(a, b channels.Inbound) bool {
	return a.ID == b.ID && a.Text == b.Text && a.Author.ID == b.Author.ID && a.Time.Equal(b.Time)
}

func samePrompt(a, b channels.Inbound) bool { return SamePrompt(a, b) }

// StartFailed is the notice of a start that failed for err: where the
// agent itself refused, with its own words.
func StartFailed(err error) sysmsg.StartFailed {
	n := sysmsg.StartFailed{Err: err.Error()}
	var ce *agent.CallError
	if errors.As(err, &ce) && ce.Says != "" {
		n.Method, n.Code, n.AgentSays = ce.Method, ce.Code, ce.Says
		var na *agent.NoAuthError
		n.NoAuth = errors.As(err, &na)
	}
	return n
}

func startFailed(err error) sysmsg.StartFailed { return StartFailed(err) }
