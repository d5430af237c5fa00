package agent

import (
	"slices"

	"github.com/acpgw/gateway/projector"
)

// Subagents (ACP 1.33). A session announces a child session with a
// subagent_update on its own id; the child's updates, permission
// requests and questions then carry the child's id. They reach the
// parent's Handler, marked as the child's (Update.Child,
// PermissionRequest.Subagent, Question.Subagent), and only once the
// parent announced the child: an id nobody announced waits (early) as an
// unknown session's does. A child belongs to one session of this
// process; an id that is a session's own, or another session's child,
// is refused, so no announce lets the agent reach another session's
// Handler (a Process serves one thread's sessions). The gateway sends a
// child nothing but session/cancel, and that only when the child said
// it can be cancelled (Session.Cancel).

// maxChildren bounds the subagents one session announces; later ones are
// refused (their updates wait as an unknown session's, bounded there).
const maxChildren = 64

// child is what the process keeps of one subagent: a few words.
type child struct {
	parent *Session
	// state is the last state.state the parent reported, cut to
	// maxChildState bytes.
	state  string
	cancel bool // capabilities.cancel
}

// maxChildState bounds the state word kept per child.
const maxChildState = 32

// deliver hands a child's update to its parent's Handler, marked as the
// child's. p.mu is held.
func (c *child) deliver(u projector.Update) {
	u.Child = u.SessionID
	c.parent.handLocked(u)
}

// announced records the subagent_update sa of session s (p.mu held): a
// new child, or a patch of one s announced. It returns the child's id,
// and false for an update to drop: no id, the id of a session, of
// another session's child, or one child too many.
func (p *Process) announced(s *Session, sa projector.SubagentUpdate) (string, bool) {
	id := sa.ID
	c := p.children[id]
	switch {
	case id == "":
		p.log.Warn("subagent_update without a session id; dropped", "session", s.ID)
		return "", false
	case p.sessions[id] != nil:
		p.log.Warn("subagent_update names a session of its own; dropped", "session", s.ID, "child", id)
		return "", false
	case c != nil && c.parent != s:
		p.log.Warn("subagent_update names another session's child; dropped", "session", s.ID, "child", id)
		return "", false
	case c == nil && len(s.children) >= maxChildren:
		p.log.Warn("too many subagents in a session; dropped", "session", s.ID, "child", id, "max", maxChildren)
		return "", false
	}
	if c == nil {
		c = &child{parent: s}
		if s.children == nil {
			s.children = map[string]*child{}
		}
		s.children[id] = c
		p.children[id] = c
		delete(p.closed, id)
	}
	if sa.StateSet {
		c.state = sa.State
		if len(c.state) > maxChildState {
			c.state = c.state[:maxChildState]
		}
	}
	if sa.CapsSet {
		c.cancel = sa.Cancel
	}
	return id, true
}

// flushChild delivers the updates of child id that came before its
// announce (p.mu held).
func (p *Process) flushChild(id string) {
	c := p.children[id]
	if c == nil {
		return
	}
	for _, u := range p.early[id] {
		c.deliver(u)
	}
	delete(p.early, id)
}

// forgetChild drops child id (p.mu held).
func (p *Process) forgetChild(id string) {
	if c := p.children[id]; c != nil {
		delete(c.parent.children, id)
		delete(p.children, id)
	}
}

// forgetChildren drops the children of s, which is closed or gone: their
// later frames are dropped as the session's are (p.mu held).
func (p *Process) forgetChildren(s *Session) {
	for id := range s.children {
		delete(p.children, id)
		p.closed[id] = true
	}
	s.children = nil
}

// handlerOf returns the session whose Handler answers a request carrying
// session id, and the child's id when id is a subagent's; nil when id is
// neither a session's nor an announced child's.
func (p *Process) handlerOf(id string) (*Session, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.sessions[id]; s != nil {
		return s, ""
	}
	if c := p.children[id]; c != nil {
		return c.parent, id
	}
	return nil, ""
}

// cancellableChildren are the children of s that said they can be
// cancelled and are at work (running, or waiting for people).
func (p *Process) cancellableChildren(s *Session) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for id, c := range s.children {
		if c.cancel && (c.state == "running" || c.state == "requires_action") {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
