// Package typing decides when a chat thread shows that the agent is working.
//
// A Machine is a pure state machine for one thread: it starts no goroutines
// and reads no clock. The dispatch lane that owns the thread reports what
// happens (TurnStart, Visible, TurnEnd, LaneIdle), calls Tick at or after
// Deadline, and performs the platform call for every Action it gets back.
//
// The lifecycle of one active period:
//
//   - Start: on TurnStart in "instant" mode, or on the turn's first Visible
//     output in "message" mode. "never" mode never starts.
//   - Refresh: while active, every interval after the last Start or Refresh,
//     because platforms expire the indicator. A zero interval never refreshes.
//     Also at once when the platform hid the indicator while the turn goes on
//     (Cleared: some platforms hide it when the bot posts), and when a Start
//     or Refresh did not reach the platform (Retry), at the time given.
//   - Stop: once the turn has ended and the lane is idle, in either order of
//     the two reports, or once the TTL has passed since the turn started.
//
// After a Stop the machine is sealed: late Visible, Tick or LaneIdle calls do
// not start typing again. Only the next TurnStart unseals it. A turn that ends
// while the lane still has work keeps typing going, so that back-to-back turns
// show one unbroken indicator.
package typing

import (
	"strconv"
	"time"
)

// Action is what the caller must do on the platform after a Machine call.
type Action uint8

// Actions.
const (
	// None means nothing changes on the platform.
	None Action = iota
	// Start means show the typing indicator.
	Start
	// Refresh means show the typing indicator again before it expires.
	Refresh
	// Stop means clear the typing indicator where the platform can, or
	// simply stop refreshing it where it cannot.
	Stop
)

// String returns "", "start", "refresh" or "stop".
func (a Action) String() string {
	switch a {
	case None:
		return ""
	case Start:
		return "start"
	case Refresh:
		return "refresh"
	case Stop:
		return "stop"
	}
	return "Action(" + strconv.Itoa(int(a)) + ")"
}

// Machine is the typing state of one thread. It is not safe for concurrent
// use; the lane that owns the thread owns its Machine. Visible, TurnEnd,
// LaneIdle and Tick first apply the TTL, so any of them may return Stop.
type Machine struct {
	mode     string
	ttl      time.Duration
	interval time.Duration

	open    bool      // a turn started and neither TurnEnd nor the TTL closed it
	busy    bool      // the lane reported queued work (LaneIdle false)
	active  bool      // the indicator is shown
	turnAt  time.Time // when the current or last turn started
	shownAt time.Time // the last Start or Refresh
	retryAt time.Time // a refresh is due then (Retry); zero when none
}

// New returns a machine for cfg. An empty cfg.Mode means "instant"; an
// unknown mode behaves as "never". interval is how often the platform needs a
// refresh; zero means the indicator never expires, so there are no refreshes.
func New(cfg Config, interval time.Duration) *Machine {
	mode := cfg.Mode
	if mode == "" {
		mode = ModeInstant
	}
	return &Machine{mode: mode, ttl: max(cfg.TTL, 0), interval: max(interval, 0)}
}

// TurnStart reports that a turn began (the prompt was sent). It unseals the
// machine and restarts the TTL. In instant mode it returns Start unless
// typing is already shown.
func (m *Machine) TurnStart(now time.Time) Action {
	m.open = true
	m.turnAt = now
	if m.mode == ModeInstant {
		return m.start(now)
	}
	return None
}

// Visible reports that something visible is being delivered (text, a tool
// line, ...). In message mode the first one of a turn returns Start. It never
// starts typing before a TurnStart or after the turn ended.
func (m *Machine) Visible(now time.Time) Action {
	if a := m.expire(now); a != None {
		return a
	}
	return m.start(now)
}

// TurnEnd reports that the turn ended (done, cancelled or failed). It returns
// Stop if typing is shown and the lane is idle; otherwise typing stops at the
// next LaneIdle(now, true).
func (m *Machine) TurnEnd(now time.Time) Action {
	if a := m.expire(now); a != None {
		return a
	}
	m.open = false
	if !m.busy {
		return m.stop()
	}
	return None
}

// Halt stops typing at once, even while the lane still delivers: the turn
// is being stopped. Typing starts again only with the next TurnStart.
func (m *Machine) Halt() Action {
	m.open = false
	return m.stop()
}

// LaneIdle reports whether the lane has nothing queued (idle is true) or got
// work (idle is false). It returns Stop if the lane became idle after the
// turn ended while typing is shown; it never starts typing.
func (m *Machine) LaneIdle(now time.Time, idle bool) Action {
	m.busy = !idle
	if a := m.expire(now); a != None {
		return a
	}
	if idle && !m.open {
		return m.stop()
	}
	return None
}

// Cleared reports that the platform hid the indicator although the turn goes
// on (it hides a bot's typing when the bot posts). While the turn is open and
// typing is shown it returns Refresh, so the indicator comes back at once;
// the next periodic refresh counts from now. It never starts typing, and
// after the turn's end it returns None: typing stops for good then.
func (m *Machine) Cleared(now time.Time) Action {
	if a := m.expire(now); a != None {
		return a
	}
	if !m.active || !m.open {
		return None
	}
	m.shownAt = now
	m.retryAt = time.Time{}
	return Refresh
}

// Retry reports that the last Start or Refresh did not reach the platform
// (it asked to slow down): while typing is shown, Tick returns Refresh at
// or after at, and Deadline says so.
func (m *Machine) Retry(at time.Time) {
	if m.active {
		m.retryAt = at
	}
}

// Tick is to be called at or after Deadline. It returns Stop when the TTL ran
// out, Refresh when a refresh is due, and None otherwise (for example when
// called early).
func (m *Machine) Tick(now time.Time) Action {
	if !m.active {
		return None
	}
	if a := m.expire(now); a != None {
		return a
	}
	if (m.interval > 0 && now.Sub(m.shownAt) >= m.interval) || (!m.retryAt.IsZero() && !now.Before(m.retryAt)) {
		m.shownAt = now
		m.retryAt = time.Time{}
		return Refresh
	}
	return None
}

// Deadline returns the next time Tick must be called: the next refresh (or
// retry) or the end of the TTL, whichever is first. It reports false when
// typing is not shown or nothing is due.
func (m *Machine) Deadline() (time.Time, bool) {
	if !m.active {
		return time.Time{}, false
	}
	var d time.Time
	ok := false
	if m.interval > 0 {
		d, ok = m.shownAt.Add(m.interval), true
	}
	if !m.retryAt.IsZero() && (!ok || m.retryAt.Before(d)) {
		d, ok = m.retryAt, true
	}
	if m.ttl > 0 {
		if t := m.turnAt.Add(m.ttl); !ok || t.Before(d) {
			d, ok = t, true
		}
	}
	return d, ok
}

// Active reports whether typing is shown.
func (m *Machine) Active() bool { return m.active }

// Reset drops all state, as when the thread is closed. It returns no Action:
// an indicator still shown is left to expire on the platform.
func (m *Machine) Reset() {
	*m = Machine{mode: m.mode, ttl: m.ttl, interval: m.interval}
}

// start shows typing if a turn is open, the mode allows it and it is not
// shown yet.
func (m *Machine) start(now time.Time) Action {
	if m.active || !m.open || (m.mode != ModeInstant && m.mode != ModeMessage) {
		return None
	}
	m.active = true
	m.shownAt = now
	m.retryAt = time.Time{}
	return Start
}

// stop clears typing if it is shown.
func (m *Machine) stop() Action {
	if !m.active {
		return None
	}
	m.active = false
	m.retryAt = time.Time{}
	return Stop
}

// expire seals the turn once the TTL has passed since it started, and returns
// Stop if that clears typing.
func (m *Machine) expire(now time.Time) Action {
	if m.ttl <= 0 || now.Sub(m.turnAt) < m.ttl {
		return None
	}
	m.open = false
	return m.stop()
}
