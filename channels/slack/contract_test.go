package slack

import (
	"context"
	"errors"
	"mime"
	"path"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
)

// contractHarness connects the channel contract suite to an adapter and a
// fake Slack with options o.
func contractHarness(o fakeOptions) func(t *testing.T) channeltest.Harness {
	return func(t *testing.T) channeltest.Harness {
		f := newFake(t, o)
		a := f.adapter(t, Options{ReactionInterval: -1})
		if _, err := a.Detect(t.Context()); err != nil {
			t.Fatalf("Detect: %v", err)
		}
		th := ref(fakeChannel, fakeThread)
		return channeltest.Harness{
			Adapter: a,
			Thread:  th,
			Inject: func(ctx context.Context, author channels.Author, text string) error {
				f.addUser(author.ID, author.Name)
				_, err := f.say(ctx, sayOptions{user: author.ID, thread: fakeThread, text: text, mention: true})
				return err
			},
			Click: func(ctx context.Context, author channels.Author, h channels.Handle, optionID string) error {
				f.addUser(author.ID, author.Name)
				_, err := f.click(ctx, author.ID, h.Thread.Channel, string(h.ID), optionID)
				return err
			},
			Seen: func(ctx context.Context, id channels.MessageID) (string, error) {
				return f.seen(fakeChannel, string(id))
			},
			SeenUpload: func(_ context.Context, h channels.Handle) (channels.Upload, error) {
				files, comments := f.sharedFiles(fakeChannel, fakeThread)
				if len(files) == 0 {
					return channels.Upload{}, errors.New("fake slack: no file shared in the thread")
				}
				u := files[len(files)-1]
				// Slack tells a file's type by its name, as people
				// download it.
				return channels.Upload{Name: u.Title, ContentType: mime.TypeByExtension(path.Ext(u.Name)), Data: u.Body, Caption: comments[len(comments)-1]}, nil
			},
			Answer: func(ctx context.Context, author channels.Author, h channels.Handle, values map[string]string) error {
				f.addUser(author.ID, author.Name)
				n := len(f.openedViews())
				if _, err := f.click(ctx, author.ID, h.Thread.Channel, string(h.ID), formAnswer); err != nil {
					return err
				}
				if err := f.waitFor(ctx, "a modal", func() bool { return len(f.views) > n }); err != nil {
					return err
				}
				_, err := f.submitView(ctx, f.openedViews()[n], values)
				return err
			},
			Reactions: func(_ context.Context, h channels.Handle) ([]string, error) {
				var out []string
				for _, name := range f.reactionsOn(h.Thread.Channel, string(h.ID)) {
					out = append(out, firstNonEmpty(emojiOf[name], name))
				}
				return out, nil
			},
			React: func(ctx context.Context, author channels.Author, h channels.Handle, emoji string) error {
				name, err := slackEmoji(emoji)
				if err != nil {
					return err
				}
				return f.react(ctx, author.ID, h.Thread.Channel, string(h.ID), name, false)
			},
			MissingID: "1699999999.999999",
			TypingShown: func(context.Context) (bool, error) {
				return f.statusShown(fakeChannel, fakeThread), nil
			},
		}
	}
}

func TestContract(t *testing.T) {
	channeltest.RunContract(t, contractHarness(fakeOptions{}))
}

// TestContractWithoutStatus runs the suite against an app whose token
// may not set the status line: the adapter is no Typer then.
func TestContractWithoutStatus(t *testing.T) {
	channeltest.RunContract(t, contractHarness(fakeOptions{statusOff: true, scopes: "app_mentions:read,channels:history,groups:history,im:history,mpim:history,users:read,files:read"}))
}

// TestContractStreaming runs the suite against a workspace that streams.
func TestContractStreaming(t *testing.T) {
	channeltest.RunContract(t, contractHarness(fakeOptions{streams: true}))
}
