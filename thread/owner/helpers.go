package owner

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
	"github.com/acpgw/gateway/store"
)

// sleep waits d, or until ctx ends; it reports whether the whole wait
// passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// newID returns a short random id for a prompt.
func NewID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// postWithin posts m in th, trying again (after a rate limit's delay, or
// briefly after another error) while ctx lasts. It blocks.
func PostWithin(ctx context.Context, ad channels.Adapter, th channels.ThreadRef, m channels.Message) error {
	for {
		_, err := ad.Post(ctx, th, m)
		if err == nil || ctx.Err() != nil {
			return err
		}
		wait := 250 * time.Millisecond
		if rl := (*channels.RateLimitError)(nil); errors.As(err, &rl) && rl.RetryAfter > wait {
			wait = rl.RetryAfter
		}
		if !Sleep(ctx, wait) {
			return err
		}
	}
}

// turnPrompt is what a running mark keeps of in, the message that started
// a turn, with files, its files as read: enough to ask it again.
func TurnPrompt(in channels.Inbound, files []channels.File) store.TurnPrompt {
	return store.TurnPrompt{ID: in.ID, Author: in.Author, Text: in.Text, Files: attach.Carry(files), Space: in.Space, Time: in.Time}
}
