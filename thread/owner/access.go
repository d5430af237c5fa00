package owner

import (
	"slices"

	"github.com/acpgw/gateway/channels"
)

// Access applies one platform's AccessRule to inbound events.
type Access struct {
	Rule    AccessRule
	HasRule bool
	// Open: the platform admits people itself (the web chat, by token),
	// so a rule there only narrows who may prompt and approve.
	Open bool
}

// InPlace reports whether the event comes from an allowed guild or
// workspace and channel.
func (a Access) InPlace(in channels.Inbound) bool {
	spaces := append(slices.Clip(a.Rule.Guilds), a.Rule.Workspaces...)
	if len(spaces) > 0 && !slices.Contains(spaces, in.Space) {
		return false
	}
	if len(a.Rule.Channels) > 0 && !slices.Contains(a.Rule.Channels, in.Thread.Channel) {
		return false
	}
	return true
}

// MayPrompt reports whether the author may prompt and stop. With no rule,
// only an open platform allows anyone (default-deny); there, a rule that
// lists no users or roles (only approvers, say) keeps it open.
func (a Access) MayPrompt(in channels.Inbound) bool {
	if !a.HasRule {
		return a.Open
	}
	if !a.InPlace(in) {
		return false
	}
	roles := append(slices.Clip(a.Rule.Roles), a.Rule.UserGroups...)
	if len(a.Rule.Users) == 0 && len(roles) == 0 {
		return a.Open || a.anyListed()
	}
	return slices.Contains(a.Rule.Users, in.Author.ID) || hasAny(in.Author.Roles, roles)
}

// anyListed: a rule that lists places but nobody opens them to everyone
// there; a rule that lists nothing at all denies (an empty section is not
// a way to open a platform by accident).
func (a Access) anyListed() bool {
	return len(a.Rule.Guilds)+len(a.Rule.Workspaces)+len(a.Rule.Channels) > 0
}

// MayApprove reports whether the author may answer permission prompts.
func (a Access) MayApprove(in channels.Inbound) bool {
	if !a.MayPrompt(in) {
		return false
	}
	if len(a.Rule.Approvers) == 0 {
		return true
	}
	return slices.Contains(a.Rule.Approvers, in.Author.ID) || hasAny(in.Author.Roles, a.Rule.Approvers)
}

func hasAny(have, want []string) bool {
	for _, h := range have {
		if slices.Contains(want, h) {
			return true
		}
	}
	return false
}
