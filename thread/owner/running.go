package owner

import (
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

// markRunning records that the thread's turn runs, so that a start after
// a crash can tell the thread it was cut off, with the message in (files:
// its files as read) that a worker taking the thread over asks again;
// key is the mark's, the machine's (BeginTurn.Mark). A prompt the thread accepted has its mark
// already (marks.go): this is for a turn begun otherwise.
func (t *Thread) markRunning(key time.Time, sessionID string, in channels.Inbound, files []channels.File) {
	t.mark(store.RunningTurn{Thread: t.ref, SessionID: sessionID, Started: key, Prompt: TurnPrompt(in, files)},
		"cannot mark the turn running; a crash during it would go unannounced")
}
