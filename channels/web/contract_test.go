package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

func TestContract(t *testing.T) {
	channeltest.RunContract(t, func(t *testing.T) channeltest.Harness {
		// The suite's people are named tokens: the web chat takes who
		// someone is from their token.
		tokens := map[string]string{"writer": "writer-token", "clicker": "clicker-token"}
		a := New(Options{Listen: "127.0.0.1:0", Users: tokens, FilesDir: t.TempDir()})
		// The suite's handler never replies; keep clicks quick.
		a.replyWait = 10 * time.Millisecond
		thread := ref(a.st.mustCreate("contract").ID)
		var c *client
		// ready waits until Run listens, then connects a client.
		ready := func(ctx context.Context) error {
			select {
			case <-a.Ready():
			case <-ctx.Done():
				return fmt.Errorf("web chat not listening: %w", ctx.Err())
			}
			if c == nil {
				c = newClient(t, a)
			}
			return nil
		}
		return channeltest.Harness{
			Adapter: a,
			Thread:  thread,
			Inject: func(ctx context.Context, au channels.Author, text string) error {
				if err := ready(ctx); err != nil {
					return err
				}
				body := map[string]string{"author": au.Name, "authorId": au.ID, "text": text}
				r, err := c.try(ctx, "POST", "/api/threads/"+thread.Thread+"/messages", body, bearer(tokens[au.Name]))
				if err != nil {
					return err
				}
				return r.want(http.StatusAccepted)
			},
			Click: func(ctx context.Context, au channels.Author, h channels.Handle, optionID string) error {
				if err := ready(ctx); err != nil {
					return err
				}
				body := map[string]string{"author": au.Name, "authorId": au.ID, "optionId": optionID}
				r, err := c.try(ctx, "POST", "/api/threads/"+h.Thread.Thread+"/prompts/"+string(h.ID)+"/answer", body, bearer(tokens[au.Name]))
				if err != nil {
					return err
				}
				return r.want(http.StatusAccepted)
			},
			Seen: func(ctx context.Context, id channels.MessageID) (string, error) {
				if err := ready(ctx); err != nil {
					return "", err
				}
				b, err := c.messages(ctx, thread.Thread)
				if err != nil {
					return "", err
				}
				for _, m := range b.Messages {
					if m.ID == string(id) {
						return m.Text, nil
					}
				}
				return "", fmt.Errorf("message %q not in the thread", id)
			},
			SeenUpload: func(ctx context.Context, h channels.Handle) (channels.Upload, error) {
				if err := ready(ctx); err != nil {
					return channels.Upload{}, err
				}
				return seenUpload(ctx, c, h)
			},
			Author: func(au channels.Author) channels.Author {
				name := strings.ToLower(au.Name)
				return channels.Author{ID: IDPrefix + name, Name: name}
			},
			MissingID: "000000000000",
			TypingShown: func(ctx context.Context) (bool, error) {
				if err := ready(ctx); err != nil {
					return false, err
				}
				b, err := c.messages(ctx, thread.Thread)
				return b.Typing, err
			},
		}
	})
}

// seenUpload returns the file of message h as a person gets it: the
// message's caption, and the file downloaded from its link.
func seenUpload(ctx context.Context, c *client, h channels.Handle) (channels.Upload, error) {
	b, err := c.messages(ctx, h.Thread.Thread)
	if err != nil {
		return channels.Upload{}, err
	}
	for _, m := range b.Messages {
		if m.ID != string(h.ID) {
			continue
		}
		if len(m.Files) != 1 || m.Files[0].URL == "" {
			return channels.Upload{}, fmt.Errorf("message %q has files %+v, want one with a link", h.ID, m.Files)
		}
		f := m.Files[0]
		r, err := c.try(ctx, "GET", f.URL, nil, nil)
		if err != nil {
			return channels.Upload{}, err
		}
		if err := r.want(http.StatusOK); err != nil {
			return channels.Upload{}, fmt.Errorf("GET %s: %w", f.URL, err)
		}
		return channels.Upload{Name: f.Name, ContentType: r.header.Get("Content-Type"), Data: r.body, Caption: m.Text}, nil
	}
	return channels.Upload{}, fmt.Errorf("message %q not in the thread", h.ID)
}
