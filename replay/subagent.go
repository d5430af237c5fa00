package replay

import (
	"encoding/json"

	"github.com/acpgw/gateway/projector"
)

// maxChildren bounds the subagents a replay follows, as package agent
// does for a live session.
const maxChildren = 64

// family marks u as a subagent's (Update.Child) when it came on the id
// of a child the session announced, as package agent routes a live one:
// the replay has one session, whose updates carry any other id only as
// a child's. A subagent_update announces one (not on a child's id).
func (r *run) family(u *projector.Update) {
	if r.children[u.SessionID] {
		u.Child = u.SessionID
		return
	}
	if id := u.Subagent.ID; u.Tag == projector.TagSubagent && id != "" && id != u.SessionID && !r.children[id] && len(r.children) < maxChildren {
		r.children[id] = true
	}
}

// sessionOf is the sessionId of a request's params, "" if none.
func sessionOf(params []byte) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.SessionID
}
