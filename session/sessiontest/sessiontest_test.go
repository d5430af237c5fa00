package sessiontest

import (
	"context"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
)

func TestTurnEnds(t *testing.T) {
	e := NewTurnEnds()
	a := channels.ThreadRef{Platform: "web", Channel: "local", Thread: "a"}
	b := channels.ThreadRef{Platform: "web", Channel: "local", Thread: "b"}
	e.Record(b, projector.TurnEnd{StopReason: "cancelled"})
	go e.Record(a, projector.TurnEnd{StopReason: "end_turn"})
	if end, ok := e.Next(t.Context(), a); !ok || end.StopReason != "end_turn" {
		t.Errorf("Next(a) = %+v, %v", end, ok)
	}
	// b's end was kept while a was waited for.
	if end, ok := e.Next(t.Context(), b); !ok || end.StopReason != "cancelled" {
		t.Errorf("Next(b) = %+v, %v", end, ok)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, ok := e.Next(ctx, a); ok {
		t.Error("Next with no end and a done context = true")
	}
}
