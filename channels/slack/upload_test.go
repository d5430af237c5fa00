package slack

import (
	"bytes"
	"testing"

	"github.com/acpgw/gateway/channels"
)

// TestUploadIntoThread: a file reaches the thread (thread_ts) through
// files.getUploadURLExternal, its upload URL and
// files.completeUploadExternal, with its bytes, name and caption.
func TestUploadIntoThread(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	if _, err := a.Detect(t.Context()); err != nil {
		t.Fatal(err)
	}
	up, ok := channels.As[channels.Uploader](a)
	if !ok {
		t.Fatal("the adapter with files:write is no Uploader")
	}
	data := []byte{0x89, 'P', 'N', 'G', 0, 0xff, 0xfe, '\n'}
	th := ref(fakeChannel, fakeThread)
	if _, err := up.Upload(t.Context(), th, channels.Upload{Name: "shot.png", Data: data, Caption: "The **screenshot**."}); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	files, comments := f.sharedFiles(fakeChannel, fakeThread)
	if len(files) != 1 {
		t.Fatalf("%d files shared in the thread, want 1", len(files))
	}
	if u := files[0]; u.Name != "shot.png" || !bytes.Equal(u.Body, data) {
		t.Errorf("shared %q with %q, want shot.png with %q", u.Name, u.Body, data)
	}
	if comments[0] != "The *screenshot*." {
		t.Errorf("comment = %q, want the caption in mrkdwn", comments[0])
	}
	if top, _ := f.sharedFiles(fakeChannel, ""); len(top) != 0 {
		t.Errorf("%d files shared at the channel's top level, want none", len(top))
	}
	got := f.callsTo("files.completeUploadExternal")
	if len(got) != 1 || got[0].Form.Get("thread_ts") != fakeThread || got[0].Form.Get("channel_id") != fakeChannel {
		t.Errorf("files.completeUploadExternal calls %+v, want one into %s/%s", got, fakeChannel, fakeThread)
	}
}

// TestUploadErrors: an empty file and a refused share are refused for
// good; an outage is not (the lane tries again).
func TestUploadErrors(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	th := ref(fakeChannel, fakeThread)
	file := channels.Upload{Name: "a.txt", Data: []byte("a")}
	if _, err := a.upload(t.Context(), th, channels.Upload{Name: "empty.txt"}); !channels.IsPermanent(err) {
		t.Errorf("Upload of an empty file = %v, want a permanent error", err)
	}
	if _, err := a.upload(t.Context(), ref("C0NONE", fakeThread), file); !channels.IsPermanent(err) {
		t.Errorf("Upload into an unknown channel = %v, want a permanent error", err)
	}
	f.setOutage(outage503)
	if _, err := a.upload(t.Context(), th, file); err == nil || channels.IsPermanent(err) {
		t.Errorf("Upload during an outage = %v, want an error to try again", err)
	}
	f.setOutage(outageNone)
	if _, err := a.upload(t.Context(), th, file); err != nil {
		t.Errorf("Upload after the outage: %v", err)
	}
}

// TestUploadNeedsScope: without files:write the adapter is no Uploader.
func TestUploadNeedsScope(t *testing.T) {
	f := newFake(t, fakeOptions{scopes: "app_mentions:read,chat:write,files:read"})
	a := f.adapter(t, Options{})
	c, err := a.Detect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := channels.As[channels.Uploader](a); ok || c.Upload {
		t.Errorf("without files:write: the adapter reports an Uploader (%v), Capabilities.Upload = %v; want neither", ok, c.Upload)
	}
}

// TestUploadEchoIgnored: Slack's file_share event for the app's own file
// reaches nobody: the next inbound message is the person's.
func TestUploadEchoIgnored(t *testing.T) {
	f := newFake(t, fakeOptions{})
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	f.addUser("U0ANN", "Ann")
	if _, err := f.say(ctx, sayOptions{user: "U0ANN", thread: fakeThread, text: "first", mention: true}); err != nil {
		t.Fatal(err)
	}
	if in := r.next(ctx); in.Text != "first" {
		t.Fatalf("inbound %q, want first", in.Text)
	}
	if _, err := a.upload(ctx, ref(fakeChannel, fakeThread), channels.Upload{Name: "a.txt", Data: []byte("a"), Caption: "here"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.say(ctx, sayOptions{user: "U0ANN", thread: fakeThread, text: "second", mention: true}); err != nil {
		t.Fatal(err)
	}
	if in := r.next(ctx); in.Text != "second" {
		t.Errorf("inbound %q (files %v), want second: the app's own file share was delivered", in.Text, in.Files)
	}
}

// TestUploadEndsTheStream: with native streaming, a file shared in a
// thread ends the stream above it, so the text that follows starts a new
// message below the file rather than growing the one above it.
func TestUploadEndsTheStream(t *testing.T) {
	f := newFake(t, fakeOptions{streams: true})
	f.addUser("U0ANN", "Ann")
	a := f.adapter(t, Options{})
	r := run(t, a, nil)
	ctx := testCtx(t)
	f.mustSay(ctx, sayOptions{user: "U0ANN", text: "hi", mention: true})
	th := r.next(ctx).Thread
	up, ok := channels.As[channels.Uploader](a)
	if !ok {
		t.Fatal("the adapter with files:write is no Uploader")
	}
	h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "Here is the report:"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.Upload(ctx, th, channels.Upload{Name: "report.txt", Data: []byte("all good\n")}); err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if st, ok := f.streamOf(fakeChannel, string(h.ID)); !ok || st.streaming {
		t.Errorf("the stream above the file is still open (stream %v)", ok)
	}
	after, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "That was it."})
	if err != nil {
		t.Fatal(err)
	}
	if after.ID == h.ID {
		t.Error("the text after the file was appended to the message above it")
	}
}
