package owner

import (
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/thread"
)

// forget stops everything of the thread (Router.drop): its owner ends it
// (the machine's Forget) and returns; forget waits for that.
func (t *Thread) forget(by string, archived bool) {
	if t.inbox.event(thread.Forget{By: channels.Author{Name: by}, Archived: archived}) {
		<-t.done
	}
}
