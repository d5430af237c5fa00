package thread

import (
	"time"

	"github.com/acpgw/gateway/channels"
)

// Reactions as status (issue 16): with MachineConfig.Reactions on, a
// person's message gets channels.ReactQueued while it waits,
// channels.ReactTaken once it is taken, channels.ReactStalled while its
// turn is silent for ReactStallAfter, and at its turn's end
// channels.ReactDone, ReactFailed or ReactStopped (a message dropped
// unrun gets ReactStopped too). Each replaces the one before (React).
// A person allowed to stop who reacts channels.ReactStop on the prompt
// or on a message of the running turn stops it (ReactionStop).

// react asks for emoji on in's message, when reactions are on.
func (m *Machine) react(in channels.Inbound, emoji string, atEnd bool, fx []Effect) []Effect {
	if !m.cfg.Reactions || in.ID == "" {
		return fx
	}
	return append(fx, React{Msg: in.ID, Emoji: emoji, AtTurnEnd: atEnd})
}

// endMark is the reaction of a turn that ended as out says.
func endMark(out TurnOutcome) string {
	switch {
	case out.Stopper != "" || out.Interrupted || out.StopReason == "cancelled":
		return channels.ReactStopped
	case out.Err != nil || out.Exited || out.Killed:
		return channels.ReactFailed
	}
	return channels.ReactDone
}

// reactionStop stops the running turn (or the start under way) when e is
// a stop reaction on its prompt or on a message of the turn.
func (m *Machine) reactionStop(now time.Time, e ReactionStop, fx []Effect) []Effect {
	if m.shutting || !e.MayStop || e.Message == "" {
		return fx
	}
	if !m.OfTurn(e.Message) {
		return fx
	}
	return m.stop(now, stopBy{by: e.By}, fx)
}

// OfTurn reports whether message id is the prompt of the running turn
// (or of the start under way) or a message posted while the turn runs.
func (m *Machine) OfTurn(id channels.MessageID) bool {
	switch {
	case id == "":
		return false
	case m.turn != nil:
		return m.turn.in.ID == id || m.turn.posted[id]
	case m.start != nil:
		return m.start.in.ID == id
	}
	return false
}

// turnPosted notes a message the gateway posted in the thread while the
// turn runs.
func (m *Machine) turnPosted(id channels.MessageID) {
	tu := m.turn
	if tu == nil || id == "" {
		return
	}
	if tu.posted == nil {
		tu.posted = map[channels.MessageID]bool{}
	}
	if len(tu.posted) < maxTurnPosted {
		tu.posted[id] = true
	}
}

// maxTurnPosted bounds the messages of a turn a stop reaction is known
// on.
const maxTurnPosted = 4096
