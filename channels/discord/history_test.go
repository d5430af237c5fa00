package discord

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/acpgw/gateway/channels"
)

// MessagesAfter reads a thread's messages after an id, oldest first, as
// Run would deliver them: the bot's own left out, the mention removed,
// the guild and each author's roles filled in (Discord's REST messages
// carry no member). A full page says there is more, and the next page
// goes on from its last message.
func TestMessagesAfter(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	th := f.threadRef()
	anchor := f.say(ann, f.thread, "seen before", false)
	first := f.say(ann, f.thread, "one", true)
	if _, err := s.a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "an answer"}); err != nil {
		t.Fatal(err)
	}
	second := f.say(bob, f.thread, "/stop now", false) // a command, as Run would deliver it
	third := f.say(ann, f.thread, "three", false)
	for range 4 { // what Run delivered live; not what is tested
		s.next(t)
	}

	p, err := s.a.MessagesAfter(ctx, th, channels.MessageID(anchor), 3)
	if err != nil {
		t.Fatal(err)
	}
	want := []channels.Inbound{
		{Thread: th, Author: channels.Author{ID: ann.ID, Name: ann.Name, Roles: ann.Roles}, Text: "one", ID: channels.MessageID(first), Space: f.guild},
		{Thread: th, Author: channels.Author{ID: bob.ID, Name: bob.Name}, Text: "/stop now", Command: &channels.Command{Name: channels.CommandStop, Args: "now"}, ID: channels.MessageID(second), Space: f.guild},
	}
	opts := cmpopts.IgnoreFields(channels.Inbound{}, "Fetch", "Reply", "Time") // times: TestMessageTimes
	if diff := cmp.Diff(want, p.Messages, opts, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("first page (-want +got):\n%s", diff)
	}
	if !p.More || p.Last != channels.MessageID(second) {
		t.Errorf("first page: More %v, Last %s; want true, %s", p.More, p.Last, second)
	}
	p, err = s.a.MessagesAfter(ctx, th, p.Last, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 1 || p.Messages[0].Text != "three" || p.More || p.Last != channels.MessageID(third) {
		t.Errorf("second page = %+v, want only \"three\", the last", p)
	}
	if n := len(f.requestsMatching("GET", "/guilds/"+f.guild+"/members/"+ann.ID)); n != 2 {
		t.Errorf("Ann's roles were read %d times, want once per page (2)", n)
	}
}
