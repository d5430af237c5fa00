package thread

import (
	"errors"
	"fmt"
	"strings"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/projector"
)

// OptionSep joins a prompt id and an ACP option id in a button's id, so a
// click names its prompt even after a restart.
const OptionSep = "/"

// DeclineOption is the option id of a question's Decline button.
const DeclineOption = "-"

// PickOption returns the first option of the wanted sort ("allow" or
// "reject"), preferring the once-only kind.
func PickOption(opts []agent.PermissionOption, want string) (agent.PermissionOption, bool) {
	for _, kind := range []string{want + "_once", want + "_always"} {
		for _, o := range opts {
			if o.Kind == kind {
				return o, true
			}
		}
	}
	return agent.PermissionOption{}, false
}

func findOption(opts []agent.PermissionOption, id string) (agent.PermissionOption, bool) {
	for _, o := range opts {
		if o.ID == id {
			return o, true
		}
	}
	return agent.PermissionOption{}, false
}

// PermissionOptions converts the agent's options for the projector.
func PermissionOptions(opts []agent.PermissionOption) []projector.PermissionOption {
	out := make([]projector.PermissionOption, len(opts))
	for i, o := range opts {
		out[i] = projector.PermissionOption{ID: o.ID, Name: o.Name, Kind: o.Kind}
	}
	return out
}

func DescribeExit(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "exit status"); i >= 0 {
		return msg[i:]
	}
	if i := strings.Index(msg, "signal:"); i >= 0 {
		return msg[i:]
	}
	return fmt.Sprint(err)
}

func IsExited(err error) bool { return errors.Is(err, agent.ErrExited) }

func stopTyping(l *dispatch.Lane) { l.StopTyping() }
