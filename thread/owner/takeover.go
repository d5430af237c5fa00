package owner

import (
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// Retaken is a prompt Adopt handed to its thread again: started is the
// key of its mark, which counts the take-over (attempts) and stands for
// it until its answer was delivered (marks.go), so that a worker taking
// the thread over after this one does not ask it a third time.
type Retaken struct {
	ID       channels.MessageID
	Text     string
	Started  time.Time
	Attempts int
}

// retake returns what Adopt left for in, the message the owner is about
// to prompt with, when in is a prompt Adopt asked again; nil otherwise.
func (t *Thread) retake(in channels.Inbound) *Retaken { return t.d.Host.Retake(t.ref, in) }

// takenOverEv has the thread's owner tell the thread that the worker
// before this one went away (takeOver).
type takenOverEv struct{ n sysmsg.WorkerLost }
