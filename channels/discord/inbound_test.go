package discord

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

func TestOwnMessagesIgnored(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	ctx := testCtx(t)
	if _, err := s.a.Post(ctx, f.threadRef(), channels.Message{Kind: channels.KindText, Text: "from the bot"}); err != nil {
		t.Fatalf("Post: %v", err)
	}
	f.say(bot2, f.thread, "from another bot", false)
	f.say(ann, f.thread, "from Ann", false)
	// The fake echoed the bot's post first; in-order delivery means it
	// would have come before these.
	if in := s.next(t); in.Text != "from another bot" || !in.Author.Bot {
		t.Errorf("first inbound = %q by %+v, want the other bot's message with Bot set", in.Text, in.Author)
	}
	if in := s.next(t); in.Text != "from Ann" || in.Author.Bot {
		t.Errorf("second inbound = %q by %+v, want Ann's", in.Text, in.Author)
	}
}

// Discord's autocomplete offers the bot's own role under the bot's name;
// a mention of that role is a mention of the bot. Other bots' roles are
// not.
func TestRoleMentionOpensThread(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	f.send(ann, f.channel, "<@&700000000000000901> for the other bot", nil, []string{"700000000000000901"}, nil)
	id := f.sayToRole(ann, f.channel, "list the files")
	in := s.next(t)
	wantRef := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	if in.Thread != wantRef || in.Text != "list the files" {
		t.Errorf("inbound = %+v, want %q in thread %v", in, "list the files", wantRef)
	}
	if th, ok := f.channelCopy(id); !ok || th.Name != "list the files" {
		t.Errorf("thread = %+v, want one named after the prompt", th)
	}
	if n := len(f.requestsMatching("POST", "/threads")); n != 1 {
		t.Errorf("%d threads opened, want 1", n)
	}
}

// When no thread can be opened for a mention, the person hears why, in
// reply to their message, instead of silence.
func TestMentionWithoutThreadIsAnswered(t *testing.T) {
	f := newFake(t)
	voice := "1000000000000000777"
	f.mu.Lock()
	f.chans[voice] = &fakeChannel{ID: voice, Type: 2, Guild: f.guild, Name: "voice"}
	f.mu.Unlock()
	s := start(t, f, Options{})
	ctx := testCtx(t)
	replyTo := func(channel, msg string) fakeMessage {
		var got fakeMessage
		f.waitFor(ctx, "an answer to "+msg, func() bool {
			for _, m := range f.botMessagesLocked(channel) {
				if m.ReplyTo == msg {
					got = m
					return true
				}
			}
			return false
		})
		return got
	}

	f.inject("POST", "/threads", 1, http.StatusForbidden, `{"message": "Missing Permissions", "code": 50013}`, nil)
	id := f.say(ann, f.channel, "open a thread please", true)
	if m := replyTo(f.channel, id); !strings.HasPrefix(m.Content, "⚙️") || !strings.Contains(m.Content, "Create Public Threads") {
		t.Errorf("answer to a refused thread = %q", m.Content)
	}
	if _, ok := f.channelCopy(id); ok {
		t.Error("a thread was opened after all")
	}

	id = f.say(ann, voice, "here?", true)
	if m := replyTo(voice, id); !strings.Contains(m.Content, "Mention me in a text channel") {
		t.Errorf("answer in a voice channel's chat = %q", m.Content)
	}

	// Nothing was delivered; the next mention works as usual.
	id = f.say(ann, f.channel, "now it works", true)
	if in := s.next(t); in.Thread.Thread != id || in.Text != "now it works" {
		t.Errorf("inbound = %+v, want the third mention in its thread", in)
	}
}

// Discord makes a long paste into message.txt and leaves the text empty:
// the mention still opens a thread, named after the file, and the file's
// text is read for the agent. Other files are described, with their link.
func TestAttachmentsReachTheAgent(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	paste := "panic: boom\n```\ngoroutine 1 [running]:\nmain.main()\n"
	id := f.sayWithFiles(ann, f.channel, "", true, fakeFile{Name: "message.txt", ContentType: "text/plain; charset=utf-8", Body: []byte(paste)})
	in := s.next(t)
	if in.Thread.Thread != id || in.Text != "" || len(in.Files) != 1 || in.Files[0].Text != "" || in.Files[0].Name != "message.txt" || in.Fetch == nil {
		t.Fatalf("inbound = %+v, want the paste as a file to fetch in thread %s", in, id)
	}
	// Nothing was downloaded yet: the gateway fetches what it runs.
	f.mu.Lock()
	early := f.downloads
	f.mu.Unlock()
	if early != 0 {
		t.Errorf("%d downloads before the gateway asked", early)
	}
	if got := in.Fetch(testCtx(t)); len(got) != 1 || got[0].Text != paste {
		t.Errorf("fetched %+v, want the paste", got)
	}
	if th, _ := f.channelCopy(id); th.Name != "message.txt" {
		t.Errorf("thread name = %q, want the file's name", th.Name)
	}

	shot := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	png := fakeFile{Name: "shot.png", ContentType: "image/png", Body: shot}
	notUTF8 := fakeFile{Name: "data.txt", Body: []byte{0xff, 0xfe, 'a'}}
	song := fakeFile{Name: "song.mp3", ContentType: "audio/mpeg", Body: []byte("ID3"), Size: 2048}
	f.sayWithFiles(ann, id, "what do you make of these?", false, png, notUTF8, song)
	in = s.next(t)
	in.Files = in.Fetch(testCtx(t))
	want := []channels.File{
		{Name: "shot.png", ContentType: "image/png", Size: len(shot), Data: shot},
		{Name: "data.txt", Size: 3, Skipped: "not UTF-8 text"},
		{Name: "song.mp3", ContentType: "audio/mpeg", Size: 2048, Skipped: "not a text or image file"},
	}
	if in.Text != "what do you make of these?" || len(in.Files) != len(want) {
		t.Fatalf("inbound = %+v, want the text and %d files", in, len(want))
	}
	for i, w := range want {
		got := in.Files[i]
		if !strings.HasPrefix(got.URL, f.srv.URL+"/attachments/") {
			t.Errorf("file %d URL = %q, want the attachment's", i, got.URL)
		}
		got.URL = ""
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("file %d (-want +got):\n%s", i, diff)
		}
	}
	// (The fake reports an attachment fetched with the bot's token as a
	// violation at cleanup.)
}

func TestMentionOpensThread(t *testing.T) {
	f := newFake(t)
	s := start(t, f, Options{})
	f.say(ann, f.channel, "no mention, not for the bot", false)
	f.say(bot2, f.channel, "a bot's mention opens nothing", true)
	prompt := "please refactor   the parser\nand keep the tests green"
	id := f.say(ann, f.channel, prompt, true)
	in := s.next(t)
	wantRef := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: id}
	if in.Thread != wantRef || in.Text != prompt || in.ID != channels.MessageID(id) || in.Space != f.guild {
		t.Errorf("inbound = %+v, want thread %v, text %q, id %s", in, wantRef, prompt, id)
	}
	th, ok := f.channelCopy(id)
	if !ok || th.Name != "please refactor the parser" || th.Parent != f.channel || th.Owner != f.bot.ID {
		t.Errorf("thread = %+v, want one named after the prompt's first line, opened by the bot", th)
	}
	if n := len(f.requestsMatching("POST", "/threads")); n != 1 {
		t.Errorf("%d threads opened, want 1", n)
	}
	// Later messages in the thread need no mention.
	f.say(bob, id, "and the lexer?", false)
	if in := s.next(t); in.Thread != wantRef || in.Text != "and the lexer?" {
		t.Errorf("inbound = %+v, want Bob's message in the thread", in)
	}
}

func TestThreadsOfOthers(t *testing.T) {
	f := newFake(t)
	f.mu.Lock()
	other := f.newIDLocked()
	f.chans[other] = &fakeChannel{ID: other, Type: 11, Guild: f.guild, Parent: f.channel, Owner: ann.ID, Name: "Ann's thread"}
	f.mu.Unlock()
	s := start(t, f, Options{})
	ref := channels.ThreadRef{Platform: Platform, Channel: f.channel, Thread: other}
	f.say(bob, other, "chatter the bot does not see", false)
	f.say(ann, other, "can you help here?", true)
	if in := s.next(t); in.Thread != ref || in.Text != "can you help here?" {
		t.Errorf("inbound = %+v, want the mention in Ann's thread", in)
	}
	f.say(bob, other, "now without a mention", false)
	if in := s.next(t); in.Text != "now without a mention" {
		t.Errorf("inbound = %q, want the thread's next message", in.Text)
	}
	// SetTitle leaves a thread someone else opened alone.
	if err := s.a.SetTitle(testCtx(t), ref, "Agent title"); err != nil {
		t.Errorf("SetTitle: %v", err)
	}
	if c, _ := f.channelCopy(other); c.Name != "Ann's thread" {
		t.Errorf("Ann's thread renamed to %q", c.Name)
	}
}

func TestDirectMessages(t *testing.T) {
	for _, dms := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[dms], func(t *testing.T) {
			f := newFake(t)
			s := start(t, f, Options{DMs: dms})
			f.say(ann, f.dm, "hello in private", false)
			f.say(ann, f.thread, "in the thread", false)
			var got []channels.Inbound
			got = append(got, s.next(t))
			if dms {
				got = append(got, s.next(t))
			}
			s.stop(t) // every event has been delivered or dropped now
			close(s.in)
			for in := range s.in {
				got = append(got, in)
			}
			var dm []channels.Inbound
			for _, in := range got {
				if in.Thread.Thread == f.dm {
					dm = append(dm, in)
				}
			}
			if !dms {
				if len(dm) != 0 {
					t.Errorf("DMs off, but delivered %+v", dm)
				}
				return
			}
			want := channels.ThreadRef{Platform: Platform, Channel: f.dm, Thread: f.dm}
			if len(dm) != 1 || dm[0].Thread != want || dm[0].Text != "hello in private" || dm[0].Space != "" {
				t.Errorf("DMs on: delivered %+v, want the DM in %v", dm, want)
			}
		})
	}
}
