package edge_test

import (
	"slices"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/cluster"
	"github.com/nats-io/nats.go/jetstream"
)

// One Slack message is stored once in the inbound stream though it comes
// as a message event to one edge and as an app_mention event (another
// event id) to another: its Nats-Msg-Id is the message, channel and ts.
// The same ts in another channel is another message; a reaction keeps
// the platform's event id, so its redelivery to another edge is dropped.
func TestOneMessageOneInboundID(t *testing.T) {
	url := startNode(t)
	recs := []*channeltest.Recorder{
		channeltest.New(channeltest.Options{Platform: "slack"}),
		channeltest.New(channeltest.Options{Platform: "slack"}),
	}
	// Each event is stored (or dropped as a duplicate) before the next is
	// delivered: the edges publish asynchronously, and the stream is read
	// once all are in.
	stored := make(chan struct{}, 8)
	for i, id := range []string{"e1", "e2"} {
		startEdgeFor(t, url, id, "slack", recs[i].Adapter()).e.OnStored(func(cluster.Event) { stored <- struct{}{} })
	}

	th := channels.ThreadRef{Platform: "slack", Channel: "C1", Thread: "1700000000.000100"}
	other := channels.ThreadRef{Platform: "slack", Channel: "C2", Thread: "1700000000.000100"}
	mention := channels.Inbound{Thread: th, Author: ann, Text: "echo hi", ID: "1700000000.000100"}
	asMessage, asMention := mention, mention
	asMessage.Event, asMention.Event = "Ev0MESSAGE", "Ev0MENTION"
	elsewhere := mention
	elsewhere.Thread, elsewhere.Event = other, "Ev0ELSEWHERE"
	reaction := channels.Inbound{Thread: th, Author: ann, ID: "Ev0REACTION", Reaction: &channels.Reaction{Message: "1700000000.000100", Emoji: "👀"}}
	for _, d := range []struct {
		rec *channeltest.Recorder
		in  channels.Inbound
	}{{recs[0], asMessage}, {recs[1], asMention}, {recs[0], elsewhere}, {recs[0], reaction}, {recs[1], reaction}} {
		if err := d.rec.Deliver(testCtx(t), d.in); err != nil {
			t.Fatal(err)
		}
		select {
		case <-stored:
		case <-testCtx(t).Done():
			t.Fatalf("%s not stored", d.in.Event)
		}
	}

	_, js := connect(t, url)
	s, err := js.Stream(testCtx(t), clusterName+"_inbound")
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(testCtx(t), seq)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.Header.Get(jetstream.MsgIDHeader))
	}
	want := []string{"slack:C1/1700000000.000100", "slack:C2/1700000000.000100", "slack:Ev0REACTION"}
	if !slices.Equal(ids, want) {
		t.Errorf("the inbound stream holds %q, want %q", ids, want)
	}
}
