package session

// Which inbound events are stops, and which of them drop the queue too.

import (
	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/channels"
)

// isStop reports whether in asks to stop the thread's turn: a Stop
// button, the /stop command, or a message that is a stop word.
func isStop(in channels.Inbound, d *abort.Detector) bool {
	switch in.Intent() {
	case channels.IntentStop:
		return true
	case channels.IntentCommand:
		return in.Command.Name == channels.CommandStop
	case channels.IntentMessage:
		return d.IsStop(in.Text)
	}
	return false
}

// isStopAll reports whether in, a stop, asks to drop the queued messages
// too: "stop all" (a stop word and "all"), "/stop all", or a Stop button
// held down (Inbound.StopAll). A plain stop ends the running turn only.
func isStopAll(in channels.Inbound, d *abort.Detector) bool {
	switch in.Intent() {
	case channels.IntentStop:
		return in.StopAll
	case channels.IntentCommand:
		return in.Command.Name == channels.CommandStop && abort.IsAllWord(in.Command.Args)
	case channels.IntentMessage:
		return d.IsStopAll(in.Text)
	}
	return false
}
