package remote

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/acpgw/gateway/channels"
)

// A thread's operation that waits for the platform's window chooses its
// edge again after each wait: chosen while its edge was restarting, it
// waited for the answers of that edge, which it was back on, to be Pace
// old, and in a busy channel, whose other operations that edge kept
// answering, that was never (a restarted worker's threads posted nothing
// for 30 s).
func TestPaceChoosesTheEdgeAgainAfterAWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pace = 5 * time.Second
		a := &Adapter{o: Options{Pace: pace, Log: slog.New(slog.DiscardHandler)},
			live: map[string]time.Time{}, left: map[string]time.Time{}, joined: map[string]time.Time{},
			since: map[string]time.Time{}, threads: map[channels.ThreadRef]map[string]time.Time{}, nextPrune: 256}
		channel := channels.ThreadRef{Platform: "slack", Channel: "C1"}
		a.answered(channel, "e0") // the channel's edge, restarting now
		back := time.Now().Add(time.Second)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		// e0 answers the channel's other operations every second.
		go func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					a.answered(channel, "e0")
				}
			}
		}()
		pick := func() string {
			if time.Now().Before(back) {
				return "e1" // e0 not live yet: the other edge
			}
			return "e0"
		}
		began := time.Now()
		edge, err := a.pace(ctx, channel, pick)
		if err != nil || edge != "e0" {
			t.Fatalf("pace = %q, %v; want e0, the channel's edge again", edge, err)
		}
		if waited := time.Since(began); waited > pace+time.Second {
			t.Errorf("waited %v for the edge the channel is on", waited)
		}
	})
}

// A thread's edge that started again under the same id (a restarted edge
// process) knows nothing of what the one before it spent in the thread's
// window: the thread waits until its last operation there is Pace old,
// as after a move to another edge (the Discord harness met 429s as its
// edges restarted).
func TestPaceWaitsForAnEdgeStartedAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const pace = 5 * time.Second
		a := &Adapter{o: Options{Pace: pace, Log: slog.New(slog.DiscardHandler)},
			live: map[string]time.Time{}, left: map[string]time.Time{}, joined: map[string]time.Time{},
			since: map[string]time.Time{}, threads: map[channels.ThreadRef]map[string]time.Time{}, nextPrune: 256}
		th := channels.ThreadRef{Platform: "discord", Channel: "g", Thread: "1"}
		a.since["e0"] = time.Now()
		a.live["e0"] = time.Now().Add(time.Hour)
		a.answered(th, "e0")
		time.Sleep(time.Second)
		// e0 stops and starts again at once: a new process, a new since.
		a.mu.Lock()
		a.since["e0"] = time.Now()
		a.mu.Unlock()
		began := time.Now()
		edge, err := a.pace(t.Context(), th, func() string { return "e0" })
		if err != nil || edge != "e0" {
			t.Fatalf("pace = %q, %v", edge, err)
		}
		if waited := time.Since(began); waited != pace-time.Second {
			t.Errorf("waited %v after the edge started again, want %v (Pace after its last operation)", waited, pace-time.Second)
		}
		// The same instance answering: no wait.
		a.answered(th, "e0")
		began = time.Now()
		if _, err := a.pace(t.Context(), th, func() string { return "e0" }); err != nil || time.Since(began) != 0 {
			t.Errorf("pace on the same instance waited %v (%v)", time.Since(began), err)
		}
	})
}
