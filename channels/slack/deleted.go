package slack

import (
	"context"

	"github.com/acpgw/gateway/channels"
)

// fromGone builds the Inbound of a thread or channel that is gone, which
// Slack says without saying who (ok false for any other event):
//   - a bound thread's root message deleted (message_deleted whose
//     deleted_ts is the thread's ts, or message_changed to a tombstone
//     when the root had replies): Closed, the thread ends for good;
//   - a channel deleted (channel_deleted, group_deleted): Closed with no
//     thread, each of its threads ends;
//   - a channel archived (channel_archived, group_archived): Archived
//     with no thread, each of its threads' agents stops and workspace
//     goes, their sessions kept for when it is unarchived.
//
// A deleted root may be the app's own (a thread /agent started).
func (a *Adapter) fromGone(ctx context.Context, ev event, team string) (channels.Inbound, bool) {
	channel := string(ev.Channel)
	switch ev.Type {
	case "channel_deleted", "group_deleted":
		return channels.Inbound{Thread: channels.ThreadRef{Platform: Platform, Channel: channel}, Closed: true, Space: team}, true
	case "channel_archived", "group_archived":
		return channels.Inbound{Thread: channels.ThreadRef{Platform: Platform, Channel: channel}, Archived: true, Space: team}, true
	case "message":
	default:
		return channels.Inbound{}, false
	}
	var root string
	switch {
	case ev.Subtype == "message_deleted":
		root = string(ev.DeletedTS)
	case ev.Subtype == "message_changed" && ev.Message != nil && ev.Message.Subtype == "tombstone":
		// A root with replies: Slack leaves "This message was deleted."
		root = string(ev.Message.TS)
	}
	if root == "" {
		return channels.Inbound{}, false
	}
	if p := ev.PreviousMessage; p != nil && p.ThreadTS != "" && string(p.ThreadTS) != root {
		return channels.Inbound{}, false // a reply, not a thread's root
	}
	ref := channels.ThreadRef{Platform: Platform, Channel: channel, Thread: root}
	if !a.isBound(ctx, ref) {
		return channels.Inbound{}, false
	}
	return channels.Inbound{Thread: ref, Closed: true, Space: team}, true
}
