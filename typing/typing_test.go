package typing

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// t0 is an arbitrary turn start time; steps are offsets from it.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// step is one call on a Machine at t0+at and the Action it must return.
type step struct {
	op   string // start, visible, end, idle, busy, tick, reset, halt, cleared, retry (at is the retry time)
	at   time.Duration
	want Action
}

// do performs s on m and returns the Action (None for reset).
func do(t testing.TB, m *Machine, s step) Action {
	t.Helper()
	now := t0.Add(s.at)
	switch s.op {
	case "start":
		return m.TurnStart(now)
	case "visible":
		return m.Visible(now)
	case "end":
		return m.TurnEnd(now)
	case "idle":
		return m.LaneIdle(now, true)
	case "busy":
		return m.LaneIdle(now, false)
	case "tick":
		return m.Tick(now)
	case "reset":
		m.Reset()
		return None
	case "halt":
		return m.Halt()
	case "cleared":
		return m.Cleared(now)
	case "retry":
		m.Retry(now)
		return None
	}
	t.Fatalf("unknown op %q", s.op)
	return None
}

// checkTransition fails t if a does not fit the machine's activity before
// and after the call: Start only from inactive, Refresh and Stop only from
// active, and Active afterwards matching the action.
func checkTransition(t testing.TB, desc string, wasActive bool, a Action, m *Machine) {
	t.Helper()
	switch a {
	case Start:
		if wasActive {
			t.Errorf("%s: Start while already active", desc)
		}
	case Refresh, Stop:
		if !wasActive {
			t.Errorf("%s: %v while inactive", desc, a)
		}
	}
	wantActive := wasActive
	switch a {
	case Start, Refresh:
		wantActive = true
	case Stop:
		wantActive = false
	}
	if got := m.Active(); got != wantActive {
		t.Errorf("%s: Active() = %v after %q, want %v", desc, got, a, wantActive)
	}
	if _, ok := m.Deadline(); ok && !m.Active() {
		t.Errorf("%s: Deadline reported while inactive", desc)
	}
}

func TestActionString(t *testing.T) {
	tests := []struct {
		a    Action
		want string
	}{
		{None, ""},
		{Start, "start"},
		{Refresh, "refresh"},
		{Stop, "stop"},
		{Action(9), "Action(9)"},
	}
	for _, tc := range tests {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("Action(%d).String() = %q, want %q", uint8(tc.a), got, tc.want)
		}
	}
}

func TestDefaultConfig(t *testing.T) {
	got := DefaultConfig()
	want := Config{Mode: ModeInstant, TTL: 10 * time.Minute}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DefaultConfig() mismatch (-want +got):\n%s", diff)
	}
}

func TestMachine(t *testing.T) {
	const s = time.Second
	instant := Config{Mode: ModeInstant}
	message := Config{Mode: ModeMessage}
	tests := []struct {
		name     string
		cfg      Config
		interval time.Duration
		steps    []step
	}{
		{
			name: "instant turn refreshes and stops at end", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"tick", 5 * s, None},
				{"tick", 8 * s, Refresh},
				{"tick", 15 * s, None},
				{"tick", 16 * s, Refresh},
				{"visible", 17 * s, None},
				{"end", 20 * s, Stop},
				{"tick", 24 * s, None},
			},
		},
		{
			name: "halt stops at once while the lane is busy, and nothing restarts it", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"halt", 2 * s, Stop},
				{"visible", 3 * s, None},
				{"tick", 9 * s, None},
				{"end", 10 * s, None},
				{"idle", 11 * s, None},
				{"start", 20 * s, Start},
			},
		},
		{
			name: "late tick refreshes once and counts from then", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"tick", 20 * s, Refresh},
				{"tick", 27 * s, None},
				{"tick", 28 * s, Refresh},
			},
		},
		{
			name: "end then idle stops on idle", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"end", 10 * s, None},
				{"tick", 16 * s, Refresh},
				{"idle", 17 * s, Stop},
				{"tick", 24 * s, None},
			},
		},
		{
			name: "idle then end stops on end", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"idle", 2 * s, None},
				{"end", 3 * s, Stop},
			},
		},
		{
			name: "sealed after stop", cfg: message, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"visible", 1 * s, Start},
				{"end", 2 * s, Stop},
				{"visible", 3 * s, None},
				{"tick", 9 * s, None},
				{"busy", 10 * s, None},
				{"idle", 11 * s, None},
				{"visible", 12 * s, None},
				{"end", 13 * s, None},
				{"start", 20 * s, None},
				{"visible", 21 * s, Start},
			},
		},
		{
			name: "next turn start unseals in instant mode", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"end", 1 * s, Stop},
				{"visible", 2 * s, None},
				{"start", 3 * s, Start},
				{"tick", 11 * s, Refresh},
			},
		},
		{
			name: "message mode starts on first visible only", cfg: message, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"tick", 1 * s, None},
				{"visible", 3 * s, Start},
				{"visible", 4 * s, None},
				{"tick", 10 * s, None},
				{"tick", 11 * s, Refresh},
				{"end", 12 * s, Stop},
			},
		},
		{
			name: "message mode turn without output never types", cfg: message, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"busy", 1 * s, None},
				{"end", 2 * s, None},
				{"visible", 3 * s, None},
				{"idle", 4 * s, None},
			},
		},
		{
			name: "never mode", cfg: Config{Mode: ModeNever, TTL: time.Minute}, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"visible", 1 * s, None},
				{"tick", 8 * s, None},
				{"busy", 9 * s, None},
				{"end", 10 * s, None},
				{"idle", 11 * s, None},
				{"tick", 2 * time.Minute, None},
			},
		},
		{
			name: "unknown mode behaves as never", cfg: Config{Mode: "sometimes"}, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"visible", 1 * s, None},
				{"end", 2 * s, None},
			},
		},
		{
			name: "empty mode behaves as instant", cfg: Config{}, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"end", 2 * s, Stop},
			},
		},
		{
			name: "zero interval starts once and never refreshes", cfg: instant, interval: 0,
			steps: []step{
				{"start", 0, Start},
				{"tick", time.Hour, None},
				{"visible", 2 * time.Hour, None},
				{"end", 3 * time.Hour, Stop},
			},
		},
		{
			name: "negative interval is zero", cfg: instant, interval: -s,
			steps: []step{
				{"start", 0, Start},
				{"tick", time.Hour, None},
			},
		},
		{
			name: "visible before turn start never starts", cfg: message, interval: 8 * s,
			steps: []step{
				{"visible", 0, None},
				{"tick", 8 * s, None},
				{"idle", 9 * s, None},
				{"start", 10 * s, None},
				{"visible", 11 * s, Start},
			},
		},
		{
			name: "instant visible before turn start never starts", cfg: instant, interval: 8 * s,
			steps: []step{
				{"visible", 0, None},
				{"busy", 1 * s, None},
				{"end", 2 * s, None},
			},
		},
		{
			name: "ttl stops and seals the turn", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"tick", 8 * s, Refresh},
				{"tick", 16 * s, Refresh},
				{"tick", 24 * s, Refresh},
				{"tick", 29 * s, None},
				{"tick", 30 * s, Stop},
				{"visible", 31 * s, None},
				{"tick", 40 * s, None},
				{"busy", 41 * s, None},
				{"end", 45 * s, None},
				{"idle", 46 * s, None},
				{"start", 50 * s, Start},
				{"tick", 58 * s, Refresh},
			},
		},
		{
			name: "ttl wins over a refresh due at the same time", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 10 * s,
			steps: []step{
				{"start", 0, Start},
				{"tick", 10 * s, Refresh},
				{"tick", 20 * s, Refresh},
				{"tick", 30 * s, Stop},
			},
		},
		{
			name: "ttl applies on visible", cfg: Config{Mode: ModeMessage, TTL: 30 * s}, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"visible", 1 * s, Start},
				{"visible", 31 * s, Stop},
				{"visible", 32 * s, None},
			},
		},
		{
			name: "ttl passed before first output", cfg: Config{Mode: ModeMessage, TTL: 30 * s}, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"visible", 30 * s, None},
				{"tick", 38 * s, None},
			},
		},
		{
			name: "ttl applies on end and idle", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 0,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"end", 31 * s, Stop},
				{"idle", 32 * s, None},
				{"start", 40 * s, Start},
				{"busy", 70 * s, Stop},
			},
		},
		{
			name: "ttl applies while draining after the end", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"end", 10 * s, None},
				{"tick", 16 * s, Refresh},
				{"tick", 24 * s, Refresh},
				{"tick", 30 * s, Stop},
				{"idle", 35 * s, None},
			},
		},
		{
			name: "back-to-back turns keep one indicator", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"end", 20 * s, None},
				{"start", 21 * s, None},
				{"idle", 22 * s, None},
				{"tick", 24 * s, Refresh},
				{"tick", 30 * s, None}, // the TTL restarted at 21s
				{"tick", 32 * s, Refresh},
				{"end", 33 * s, Stop},
			},
		},
		{
			name: "message mode keeps typing into a queued turn", cfg: message, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"visible", 1 * s, Start},
				{"busy", 2 * s, None},
				{"end", 3 * s, None},
				{"start", 4 * s, None},
				{"visible", 5 * s, None},
				{"idle", 6 * s, None},
				{"end", 7 * s, Stop},
			},
		},
		{
			name: "turn end twice stops once", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"end", 1 * s, Stop},
				{"end", 2 * s, None},
				{"idle", 3 * s, None},
			},
		},
		{
			name: "turn start while active does not start again", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"start", 1 * s, None},
				{"tick", 8 * s, Refresh},
			},
		},
		{
			name: "a post that clears typing brings it back while the turn runs, not after", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"cleared", 2 * s, Refresh},
				{"cleared", 2 * s, Refresh}, // each post clears it again
				{"tick", 8 * s, None},       // the period counts from the last show
				{"tick", 10 * s, Refresh},
				{"cleared", 11 * s, Refresh},
				{"end", 12 * s, None}, // the lane still delivers
				{"cleared", 13 * s, None},
				{"tick", 19 * s, Refresh}, // draining: the old refresh keeps it
				{"idle", 20 * s, Stop},
				{"cleared", 21 * s, None},
				{"tick", 40 * s, None},
			},
		},
		{
			name: "cleared never starts typing", cfg: message, interval: 8 * s,
			steps: []step{
				{"start", 0, None},
				{"cleared", 1 * s, None},
				{"visible", 2 * s, Start},
				{"halt", 3 * s, Stop},
				{"cleared", 4 * s, None},
			},
		},
		{
			name: "cleared after the ttl stops", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"cleared", 31 * s, Stop},
			},
		},
		{
			name: "a refused refresh is retried when asked", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"cleared", 2 * s, Refresh},
				{"retry", 3 * s, None}, // refused: try again at 3 s
				{"tick", 2500 * time.Millisecond, None},
				{"tick", 3 * s, Refresh},
				{"tick", 4 * s, None}, // once
				{"tick", 11 * s, Refresh},
			},
		},
		{
			name: "no retry after a stop", cfg: instant, interval: 0,
			steps: []step{
				{"start", 0, Start},
				{"retry", 3 * s, None},
				{"end", 1 * s, Stop},
				{"tick", 4 * s, None},
			},
		},
		{
			name: "reset drops everything", cfg: instant, interval: 8 * s,
			steps: []step{
				{"start", 0, Start},
				{"busy", 1 * s, None},
				{"reset", 2 * s, None},
				{"tick", 8 * s, None},
				{"visible", 9 * s, None},
				{"end", 10 * s, None},
				{"start", 11 * s, Start},
				{"end", 12 * s, Stop}, // the lane is idle again after Reset
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.cfg, tc.interval)
			for i, s := range tc.steps {
				desc := fmt.Sprintf("step %d (%s at %v)", i, s.op, s.at)
				was := m.Active()
				got := do(t, m, s)
				if got != s.want {
					t.Errorf("%s = %q, want %q", desc, got, s.want)
				}
				if s.op != "reset" {
					checkTransition(t, desc, was, got, m)
				}
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name     string
		cfg      Config
		interval time.Duration
		steps    []step
		want     time.Duration // offset from t0
		wantOK   bool
	}{
		{
			name: "new machine", cfg: DefaultConfig(), interval: 8 * s,
		},
		{
			name: "next refresh", cfg: DefaultConfig(), interval: 8 * s,
			steps: []step{{"start", 2 * s, Start}},
			want:  10 * s, wantOK: true,
		},
		{
			name: "after a late refresh", cfg: DefaultConfig(), interval: 8 * s,
			steps: []step{{"start", 0, Start}, {"tick", 13 * s, Refresh}},
			want:  21 * s, wantOK: true,
		},
		{
			name: "ttl before refresh", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 8 * s,
			steps: []step{{"start", 0, Start}, {"tick", 24 * s, Refresh}},
			want:  30 * s, wantOK: true,
		},
		{
			name: "ttl only with zero interval", cfg: Config{Mode: ModeInstant, TTL: 30 * s}, interval: 0,
			steps: []step{{"start", 5 * s, Start}},
			want:  35 * s, wantOK: true,
		},
		{
			name: "ttl counts from turn start in message mode", cfg: Config{Mode: ModeMessage, TTL: 30 * s}, interval: 0,
			steps: []step{{"start", 0, None}, {"visible", 20 * s, Start}},
			want:  30 * s, wantOK: true,
		},
		{
			name: "nothing due with zero interval and no ttl", cfg: Config{Mode: ModeInstant}, interval: 0,
			steps: []step{{"start", 0, Start}},
		},
		{
			name: "turn open but typing not shown", cfg: Config{Mode: ModeMessage, TTL: 30 * s}, interval: 8 * s,
			steps: []step{{"start", 0, None}},
		},
		{
			name: "after a post cleared typing", cfg: DefaultConfig(), interval: 8 * s,
			steps: []step{{"start", 0, Start}, {"cleared", 5 * s, Refresh}},
			want:  13 * s, wantOK: true,
		},
		{
			name: "retry before the next refresh", cfg: DefaultConfig(), interval: 8 * s,
			steps: []step{{"start", 0, Start}, {"retry", 2 * s, None}},
			want:  2 * s, wantOK: true,
		},
		{
			name: "retry with zero interval", cfg: Config{Mode: ModeInstant}, interval: 0,
			steps: []step{{"start", 0, Start}, {"retry", 2 * s, None}},
			want:  2 * s, wantOK: true,
		},
		{
			name: "retry after the next refresh", cfg: DefaultConfig(), interval: 8 * s,
			steps: []step{{"start", 0, Start}, {"retry", 9 * s, None}},
			want:  8 * s, wantOK: true,
		},
		{
			name: "after stop", cfg: DefaultConfig(), interval: 8 * s,
			steps: []step{{"start", 0, Start}, {"end", 1 * s, Stop}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New(tc.cfg, tc.interval)
			for _, s := range tc.steps {
				if got := do(t, m, s); got != s.want {
					t.Fatalf("%s at %v = %q, want %q", s.op, s.at, got, s.want)
				}
			}
			got, ok := m.Deadline()
			var want time.Time
			if tc.wantOK {
				want = t0.Add(tc.want)
			}
			if ok != tc.wantOK || !got.Equal(want) {
				t.Errorf("Deadline() = %v, %v, want %v, %v", got, ok, want, tc.wantOK)
			}
		})
	}
}

// FuzzMachine drives a Machine with arbitrary call sequences and checks the
// lifecycle invariants against a small model of the turn.
func FuzzMachine(f *testing.F) {
	f.Add(uint8(0), uint8(8), uint8(30), []byte{0, 1, 5 | 8<<3, 5 | 8<<3, 4, 2, 3})
	f.Add(uint8(1), uint8(10), uint8(0), []byte{0, 1 | 1<<3, 4, 2, 5 | 9<<3, 0, 3, 2})
	f.Add(uint8(2), uint8(8), uint8(30), []byte{0, 1, 2, 3, 4, 5, 6})
	f.Add(uint8(0), uint8(8), uint8(30), []byte{0, 4, 7 | 2<<3, 5 | 7<<3, 5 | 1<<3, 2, 7, 3, 7})
	f.Fuzz(func(t *testing.T, mode, interval, ttl uint8, ops []byte) {
		cfg := Config{
			Mode: []string{ModeInstant, ModeMessage, ModeNever}[mode%3],
			TTL:  time.Duration(ttl) * time.Second,
		}
		iv := time.Duration(interval%32) * time.Second
		m := New(cfg, iv)
		now := t0
		var (
			inTurn  bool // TurnStart seen, TurnEnd not yet
			stopped bool // a Stop happened since the last TurnStart
			turnAt  time.Time
			shownAt time.Time
		)
		for i, b := range ops {
			now = now.Add(time.Duration(b>>3) * time.Second)
			was := m.Active()
			deadline, hasDeadline := m.Deadline()
			var a Action
			op := b & 7
			switch op {
			case 0:
				a = m.TurnStart(now)
				inTurn, stopped, turnAt = true, false, now
			case 1:
				a = m.Visible(now)
			case 2:
				a = m.TurnEnd(now)
			case 3:
				a = m.LaneIdle(now, true)
			case 4:
				a = m.LaneIdle(now, false)
			case 7:
				a = m.Cleared(now)
				if a == Refresh && (!inTurn || stopped) {
					t.Fatalf("op %d: Cleared = Refresh outside an open turn", i)
				}
				if was && inTurn && !stopped && a == None && (cfg.TTL == 0 || now.Sub(turnAt) < cfg.TTL) {
					t.Fatalf("op %d: Cleared while typing is shown in an open turn returned nothing", i)
				}
			case 5:
				a = m.Tick(now)
				if a != None && (!hasDeadline || now.Before(deadline)) {
					t.Fatalf("op %d: Tick = %q before Deadline %v, %v at %v", i, a, deadline, hasDeadline, now)
				}
				if was && hasDeadline && !now.Before(deadline) && a == None {
					t.Fatalf("op %d: Tick at %v past Deadline %v returned nothing", i, now, deadline)
				}
			case 6:
				m.Reset()
				inTurn, stopped = false, false
				if m.Active() {
					t.Fatalf("op %d: active after Reset", i)
				}
				continue
			}
			desc := fmt.Sprintf("op %d (%d)", i, op)
			checkTransition(t, desc, was, a, m)
			switch a {
			case Start:
				if cfg.Mode == ModeNever {
					t.Fatalf("%s: Start in never mode", desc)
				}
				if !inTurn || stopped {
					t.Fatalf("%s: Start outside an open turn (inTurn=%v stopped=%v)", desc, inTurn, stopped)
				}
				shownAt = now
			case Refresh:
				if op != 7 && (iv == 0 || now.Sub(shownAt) < iv) {
					t.Fatalf("%s: Refresh %v after the last show, interval %v", desc, now.Sub(shownAt), iv)
				}
				shownAt = now
			case Stop:
				stopped = true
			}
			if op == 2 {
				inTurn = false
			}
			if m.Active() && cfg.TTL > 0 && now.Sub(turnAt) >= cfg.TTL && op != 0 {
				t.Fatalf("%s: still active %v after turn start, TTL %v", desc, now.Sub(turnAt), cfg.TTL)
			}
		}
	})
}

func BenchmarkTurn(b *testing.B) {
	m := New(DefaultConfig(), 8*time.Second)
	for b.Loop() {
		now := t0
		m.TurnStart(now)
		for range 10 {
			now = now.Add(8 * time.Second)
			m.Visible(now)
			if d, ok := m.Deadline(); ok && !now.Before(d) {
				m.Tick(now)
			}
		}
		m.TurnEnd(now)
	}
}
