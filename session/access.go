package session

import (
	"slices"

	"github.com/acpgw/gateway/channels"
)

// access applies one platform's AccessRule to inbound events.
type access struct {
	rule    AccessRule
	hasRule bool
	// open: the platform admits people itself (the web chat, by token),
	// so a rule there only narrows who may prompt and approve.
	open bool
}

// inPlace reports whether the event comes from an allowed guild or
// workspace and channel.
func (a access) inPlace(in channels.Inbound) bool {
	spaces := append(slices.Clip(a.rule.Guilds), a.rule.Workspaces...)
	if len(spaces) > 0 && !slices.Contains(spaces, in.Space) {
		return false
	}
	if len(a.rule.Channels) > 0 && !slices.Contains(a.rule.Channels, in.Thread.Channel) {
		return false
	}
	return true
}

// mayPrompt reports whether the author may prompt and stop. With no rule,
// only an open platform allows anyone (default-deny); there, a rule that
// lists no users or roles (only approvers, say) keeps it open.
func (a access) mayPrompt(in channels.Inbound) bool {
	if !a.hasRule {
		return a.open
	}
	if !a.inPlace(in) {
		return false
	}
	roles := append(slices.Clip(a.rule.Roles), a.rule.UserGroups...)
	if len(a.rule.Users) == 0 && len(roles) == 0 {
		return a.open || a.anyListed()
	}
	return slices.Contains(a.rule.Users, in.Author.ID) || hasAny(in.Author.Roles, roles)
}

// anyListed: a rule that lists places but nobody opens them to everyone
// there; a rule that lists nothing at all denies (an empty section is not
// a way to open a platform by accident).
func (a access) anyListed() bool {
	return len(a.rule.Guilds)+len(a.rule.Workspaces)+len(a.rule.Channels) > 0
}

// mayApprove reports whether the author may answer permission prompts.
func (a access) mayApprove(in channels.Inbound) bool {
	if !a.mayPrompt(in) {
		return false
	}
	if len(a.rule.Approvers) == 0 {
		return true
	}
	return slices.Contains(a.rule.Approvers, in.Author.ID) || hasAny(in.Author.Roles, a.rule.Approvers)
}

func hasAny(have, want []string) bool {
	for _, h := range have {
		if slices.Contains(want, h) {
			return true
		}
	}
	return false
}
