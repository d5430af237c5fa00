package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/slack-go/slack"

	"github.com/acpgw/gateway/channels"
)

// maxUploadBytes is the largest file the adapter uploads: Slack takes
// files of up to 1 GB.
const maxUploadBytes = 1 << 30

// filesScope is the bot scope Upload needs.
const filesScope = "files:write"

// upload shares f in the thread t: files.getUploadURLExternal, the bytes
// to the URL it names, then files.completeUploadExternal into the channel
// with thread_ts and the caption as the initial comment (slack-go's
// UploadFileContext). Slack does not say which message shows the file, so
// the handle has no id. It blocks on I/O and returns a
// *channels.RateLimitError when Slack answers 429.
func (a *Adapter) upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	if len(f.Data) == 0 {
		return channels.Handle{}, channels.Permanent(errors.New("slack: upload: Slack takes no empty files"))
	}
	if len(f.Data) > maxUploadBytes {
		return channels.Handle{}, channels.Permanent(fmt.Errorf("slack: upload: %s has %d bytes, more than Slack's %d", f.Name, len(f.Data), maxUploadBytes))
	}
	// A file ends the thread's open stream, so that later text starts a
	// new message below the file instead of growing the one above it.
	a.stopOpen(ctx, t)
	if err := a.pace(t.Channel, t.Thread, time.Now()); err != nil {
		return channels.Handle{}, err
	}
	name := fileName(f.Name)
	_, err := a.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader:          bytes.NewReader(f.Data),
		FileSize:        len(f.Data),
		Filename:        name,
		Title:           name,
		InitialComment:  Mrkdwn(f.Caption),
		Channel:         t.Channel,
		ThreadTimestamp: t.Thread,
	})
	if err != nil {
		return channels.Handle{}, a.apiErr("files.upload", err)
	}
	a.restoreStatus(ctx, t)
	return channels.Handle{Thread: t}, nil
}

// fileName returns name as a shared file's name: control characters and
// path separators become "_", and an empty name is "file".
func fileName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '/' || r == '\\' {
			return '_'
		}
		return r
	}, name)
	if strings.Trim(name, ". ") == "" {
		return "file"
	}
	return name
}

// Upload shares f in the thread t; see Adapter.upload. Where the
// adapter does not report uploads (Caps: the token may not share files)
// it fails with a *channels.PermanentError and asks Slack nothing.
func (a *Adapter) Upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	if c, _ := a.capabilities(); !c.Upload {
		return channels.Handle{}, channels.Permanent(errors.New("slack: the bot token may not share files (" + filesScope + ")"))
	}
	return a.upload(ctx, t, f)
}

var _ channels.Uploader = (*Adapter)(nil)
