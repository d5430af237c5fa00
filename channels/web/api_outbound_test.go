package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/channels"
)

func TestOutboundErrors(t *testing.T) {
	a := New(Options{})
	ctx := t.Context()
	th := ref(a.st.mustCreate("").ID)
	done, cancel := context.WithCancel(ctx)
	cancel()
	h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		err  error
		gone bool
	}{
		{"post other platform", second(a.Post(ctx, channels.ThreadRef{Platform: "slack", Channel: "local", Thread: th.Thread}, channels.Message{Text: "x"})), false},
		{"post unknown thread", second(a.Post(ctx, ref("nope"), channels.Message{Text: "x"})), false},
		{"post empty", second(a.Post(ctx, th, channels.Message{Text: ""})), false},
		{"post bad UTF-8", second(a.Post(ctx, th, channels.Message{Text: "\xff"})), false},
		{"post ended context", second(a.Post(done, th, channels.Message{Text: "x"})), false},
		{"edit unknown", a.Edit(ctx, channels.Handle{Thread: th, ID: "nope"}, channels.Message{Text: "x"}), true},
		{"edit unknown thread", a.Edit(ctx, channels.Handle{Thread: ref("nope"), ID: h.ID}, channels.Message{Text: "x"}), true},
		{"edit empty", a.Edit(ctx, h, channels.Message{Text: ""}), false},
		{"typing unknown thread", a.Typing(ctx, ref("nope")), false},
		{"prompt no options", second(a.Prompt(ctx, th, channels.Choice{Text: "q"})), false},
		{"prompt duplicate option", second(a.Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{ID: "a"}, {ID: "a"}}})), false},
		{"prompt empty option id", second(a.Prompt(ctx, th, channels.Choice{Text: "q", Options: []channels.Option{{Label: "A"}}})), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.err == nil {
				t.Fatal("got nil, want an error")
			}
			if got := errors.Is(tc.err, channels.ErrMessageGone); got != tc.gone {
				t.Errorf("errors.Is(%v, ErrMessageGone) = %v, want %v", tc.err, got, tc.gone)
			}
			if !strings.HasPrefix(tc.err.Error(), "web: ") {
				t.Errorf("error %q lacks the web: prefix", tc.err)
			}
		})
	}
	// A user's message is not the gateway's to edit.
	uid, _ := a.st.addMessage(th.Thread, message{Role: roleUser, Author: "ann", Kind: "text", Text: "hi"})
	if err := a.Edit(ctx, channels.Handle{Thread: th, ID: channels.MessageID(uid.ID)}, channels.Message{Text: "x"}); !errors.Is(err, channels.ErrMessageGone) {
		t.Errorf("Edit of a person's message = %v, want ErrMessageGone", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestConcurrentUse(t *testing.T) {
	a := New(Options{Listen: "127.0.0.1:0"})
	var mu sync.Mutex
	var got int
	in := serve(t, a, func(context.Context, channels.Inbound) {
		mu.Lock()
		got++
		mu.Unlock()
	})
	c := newClient(t, a)
	ctx := t.Context()
	id := c.newThread(ctx, t)
	th := ref(id)
	s := c.openStream(t, "/api/threads/"+id+"/events")

	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*each)
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				body := map[string]string{"author": fmt.Sprintf("w%d", w), "text": fmt.Sprintf("message %d", i)}
				r, err := c.try(ctx, "POST", "/api/threads/"+id+"/messages", body, nil)
				if err == nil {
					err = r.want(http.StatusAccepted)
				}
				if err != nil {
					errs <- err
				}
			}
		})
		wg.Go(func() {
			for i := range each {
				h, err := a.Post(ctx, th, channels.Message{Kind: channels.KindText, Text: "x"})
				if err == nil {
					err = a.Edit(ctx, h, channels.Message{Kind: channels.KindText, Text: fmt.Sprintf("edit %d", i)})
				}
				if err == nil {
					err = a.Typing(ctx, th)
				}
				if err != nil {
					errs <- err
				}
				if _, err := c.messages(ctx, id); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for range writers * each {
		in.next(t)
	}
	b, err := c.messages(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Messages) != 2*writers*each {
		t.Errorf("messages = %d, want %d", len(b.Messages), 2*writers*each)
	}
	// The stream saw every message (created or edited) in the end.
	seen := map[string]message{}
	for len(seen) < len(b.Messages) {
		m := s.nextMessage(t)
		seen[m.ID] = m
	}
}
