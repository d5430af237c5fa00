package slack

import (
	"math/rand/v2"
	"testing"
)

// TestTurnEndedStopsTheStream: the lane tells the adapter (TurnEnder)
// once a turn's last output is out, and the turn's streamed message is
// stopped then, with no FinishStreams call and no status line (the
// adapter without one has no StopTyping to stop it either).
func TestTurnEndedStopsTheStream(t *testing.T) {
	f := newFake(t, fakeOptions{streams: true})
	a := f.adapter(t, Options{Streaming: StreamingNative})
	th := ref(fakeChannel, fakeThread)
	want, _ := laneRun(t, a, th, rand.New(rand.NewPCG(3, 16)))
	got, _ := delivered(f, fakeChannel, fakeThread)
	if got != want {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	if len(f.callsTo("chat.startStream")) == 0 {
		t.Fatal("nothing streamed: the test shows nothing")
	}
	if len(f.callsTo("chat.stopStream")) == 0 {
		t.Fatal("no chat.stopStream at the turn's end")
	}
	for _, m := range f.thread(fakeChannel, fakeThread) {
		if m.Stream != nil && m.Stream.streaming {
			t.Fatalf("stream %s left open after the turn ended", m.TS)
		}
	}
}
