package thread

// A person's message on its way in (Received): dropped when it came
// before, a stop, a numbered answer, or a prompt, which is marked in the
// store until its answer was delivered. Every prompt the thread accepted
// keeps its mark while it is queued, waiting for an agent or running; a
// worker that dies leaves the marks for the worker taking the thread
// over, which asks the prompts again, and a restart tells the thread.

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// tookKept is how many of a thread's last message ids it keeps to know
// a message delivered twice.
const tookKept = 128

// marks is what the machine keeps of the messages it took.
type marks struct {
	// took are the ids of the last messages taken, oldest first.
	took []channels.MessageID
	// accepted are the prompts taken and marked whose turns have not
	// begun.
	accepted []accepted
	// last is the newest mark's key.
	last time.Time
}

type accepted struct {
	in  channels.Inbound
	key time.Time
}

// Took tells the machine of a thread not yet running the id of the last
// message taken before it (the store's seen mark), which it does not
// take again.
func (m *Machine) Took(id channels.MessageID) { m.marks.tookBefore(id) }

// tookBefore reports whether a message with id was taken already, and
// remembers it otherwise. A platform redelivers an event whose
// acknowledgement it missed, and a cluster's stream one whose worker
// died before its word got out, after the worker taking the thread over
// asked the prompt again from its mark: the second copy would be
// answered twice. Messages without an id are always new.
func (k *marks) tookBefore(id channels.MessageID) bool {
	if id == "" {
		return false
	}
	if slices.Contains(k.took, id) {
		return true
	}
	if len(k.took) == tookKept {
		k.took = slices.Delete(k.took, 0, 1)
	}
	k.took = append(k.took, id)
	return false
}

// key returns the key of a new mark: now, to the millisecond the store
// keeps, after every key given before.
func (k *marks) key(now time.Time) time.Time {
	key := store.NormTime(now)
	if !key.After(k.last) {
		key = k.last.Add(time.Millisecond)
	}
	k.last = key
	return key
}

// taken returns the mark of in, whose turn begins now, and true when in
// was accepted (its mark is written); else a new key, false.
func (k *marks) taken(in channels.Inbound, now time.Time) (time.Time, bool) {
	for i, a := range k.accepted {
		if samePrompt(a.in, in) {
			k.accepted = slices.Delete(k.accepted, i, i+1)
			return a.key, true
		}
	}
	return k.key(now), false
}

func (m *Machine) received(now time.Time, e Received, fx []Effect) []Effect {
	if m.marks.tookBefore(e.In.ID) && e.Retaken.IsZero() {
		return append(fx, Duplicate{ID: e.In.ID})
	}
	if e.Stop {
		if m.shutting {
			return fx
		}
		return m.stop(now, stopBy{by: e.In.Author, all: e.All}, m.noPrompt(e, fx))
	}
	if e.Numbered {
		if fx, ok := m.answerByNumber(e, fx); ok {
			return m.noPrompt(e, fx)
		}
	}
	key := e.Retaken
	if key.IsZero() {
		key = m.marks.key(now)
		fx = append(fx, MarkPrompt{In: e.In, Key: key})
	}
	m.marks.accepted = append(m.marks.accepted, accepted{in: e.In, key: key})
	return m.prompt(now, PromptIn{In: e.In, Caught: e.Caught}, fx)
}

// noPrompt clears the mark of a message a take-over asked again (its
// earlier owner marked it as a prompt) that is no prompt here: a stop, or
// a number that answers a prompt now waiting. Left, the mark would have
// the thread's next owner ask it again.
func (m *Machine) noPrompt(e Received, fx []Effect) []Effect {
	if e.Retaken.IsZero() {
		return fx
	}
	return append(fx, ClearMark{Key: e.Retaken})
}

// answerByNumber answers the oldest pending prompt from a reply such as
// "1" or "2.", where the channel has no buttons; false when the message
// is no such answer.
func (m *Machine) answerByNumber(e Received, fx []Effect) ([]Effect, bool) {
	n, err := strconv.Atoi(strings.TrimRight(strings.TrimSpace(e.In.Text), ".)"))
	if err != nil || len(m.prompts) == 0 {
		return fx, false
	}
	p := m.prompts[0]
	if n < 1 || n > len(p.options) {
		return append(fx, Notify{Notice: sysmsg.AnswerRange{Options: len(p.options)}}), true
	}
	return m.answer(PermissionAnswer{ID: p.id, Option: p.options[n-1], By: e.In.Author, Approver: e.Approver}, fx), true
}

// settleAccepted clears the marks of the accepted prompts the machine
// neither queues nor starts any more and whose turns did not begin: a
// stop dropped them, their start failed, they were refused. Those a
// shutdown dropped keep their marks: nobody answered them, the thread's
// next owner asks them again.
func (m *Machine) settleAccepted(fx []Effect) []Effect {
	if len(m.marks.accepted) == 0 || m.shutting {
		return fx
	}
	kept := m.marks.accepted[:0]
	for _, a := range m.marks.accepted {
		if m.Holds(a.in) {
			kept = append(kept, a)
			continue
		}
		fx = append(fx, ClearMark{Key: a.key})
	}
	clear(m.marks.accepted[len(kept):])
	m.marks.accepted = kept
	return fx
}
