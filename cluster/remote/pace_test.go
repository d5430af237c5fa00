package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/cluster/wire"
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
			live: map[string]time.Time{}, left: map[string]time.Time{}, joined: map[string]time.Time{}, ended: map[string]time.Time{},
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
			live: map[string]time.Time{}, left: map[string]time.Time{}, joined: map[string]time.Time{}, ended: map[string]time.Time{},
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

// liveEnt is an entry of the live bucket as the watch gives it.
type liveEnt struct {
	key     string
	value   []byte
	created time.Time
	op      jetstream.KeyValueOp
}

func (e liveEnt) Bucket() string                  { return "live" }
func (e liveEnt) Key() string                     { return e.key }
func (e liveEnt) Value() []byte                   { return e.value }
func (e liveEnt) Revision() uint64                { return 1 }
func (e liveEnt) Created() time.Time              { return e.created }
func (e liveEnt) Delta() uint64                   { return 0 }
func (e liveEnt) Operation() jetstream.KeyValueOp { return e.op }

// A thread new to this worker (taken over from one that died) whose edge
// started again under the same id waits until the process before it
// ended Pace ago: that one may have spent the thread's window for the
// worker before, and the new one knows nothing of it. The Discord
// harness met a 429 on typing so, when the other edge, whose presence
// made the thread wait as a move, had stopped too. Its entry deleted or
// written over by the new process's (a kill), alike.
func TestPaceWaitsForAnEdgeStartedAgainOnAThreadNewHere(t *testing.T) {
	for _, killed := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			const pace = 5 * time.Second
			a := &Adapter{o: Options{Platform: "discord", Pace: pace, Log: slog.New(slog.DiscardHandler)},
				live: map[string]time.Time{}, left: map[string]time.Time{}, joined: map[string]time.Time{}, ended: map[string]time.Time{},
				since: map[string]time.Time{}, threads: map[channels.ThreadRef]map[string]time.Time{}, nextPrune: 256}
			// A thread that falls to e0 while both serve.
			var th channels.ThreadRef
			for i := 0; ; i++ {
				th = channels.ThreadRef{Platform: "discord", Channel: "g", Thread: fmt.Sprint(i)}
				if score(th, "e0") > score(th, "e1") {
					break
				}
			}
			put := func(edge string, since time.Time) {
				b, _ := json.Marshal(wire.Live{Platform: "discord", Edge: edge, TTL: time.Minute, Since: since})
				a.liveEntry(liveEnt{key: "discord." + edge, value: b, created: time.Now(), op: jetstream.KeyValuePut}, true)
			}
			del := func(edge string) {
				a.liveEntry(liveEnt{key: "discord." + edge, created: time.Now(), op: jetstream.KeyValueDelete}, true)
			}
			put("e0", time.Now())
			put("e1", time.Now())
			time.Sleep(time.Minute) // both long settled
			put("e0", time.Now().Add(-time.Minute))
			put("e1", time.Now().Add(-time.Minute))
			time.Sleep(time.Second)
			ended := time.Now()
			if !killed {
				del("e0")
			}
			time.Sleep(100 * time.Millisecond)
			put("e0", time.Now()) // the new process
			time.Sleep(time.Second)
			del("e1") // the other edge stops too
			time.Sleep(100 * time.Millisecond)

			began := time.Now()
			edge, err := a.pace(t.Context(), th, func() string { return a.edgeFor(th) })
			if err != nil || edge != "e0" {
				t.Fatalf("pace = %q, %v; want e0", edge, err)
			}
			want := pace - began.Sub(ended)
			if killed {
				want += 100 * time.Millisecond // from the new process's start
			}
			if waited := time.Since(began); waited != want {
				t.Errorf("killed %v: waited %v, want %v (Pace after e0's process before ended)", killed, waited, want)
			}
		})
	}
}
