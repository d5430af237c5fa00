package edge

import "github.com/acpgw/gateway/channels"

// inboundID is the Nats-Msg-Id of an inbound event, by which the inbound
// stream stores it once within cluster.duplicateWindow. A message (or a
// command written as one) is named by itself, "<platform>:<channel>/<id>"
// (Slack's ts, Discord's message id), whichever delivery carried it: Slack
// sends a mention as a message event and an app_mention event with event
// ids of their own, possibly to two edges, and a ts is unique only in its
// channel. Any other event (a reaction, a click, a deletion) is named by
// the platform's id of the event, Event or else ID; "" when it has
// neither.
func inboundID(platform string, in channels.Inbound) string {
	switch {
	case in.ID != "" && (in.Intent() == channels.IntentMessage || in.Intent() == channels.IntentCommand):
		return platform + ":" + in.Thread.Channel + "/" + string(in.ID)
	case in.Event != "":
		return platform + ":" + in.Event
	case in.ID != "":
		return platform + ":" + string(in.ID)
	}
	return ""
}
