package jsstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/store"
)

// SetOpenMessages replaces t's open messages (bucket <name>_open, one
// value per thread); none deletes them.
func (s *Store) SetOpenMessages(ctx context.Context, t channels.ThreadRef, ms []store.OpenMessage) error {
	var err error
	if len(ms) == 0 {
		err = del(ctx, s.open, threadKey(t))
	} else {
		err = put(ctx, s.open, threadKey(t), openCodec, ms)
	}
	if err != nil {
		return fmt.Errorf("record the open messages of %s: %w", t, err)
	}
	return nil
}

// OpenMessages returns t's open messages.
func (s *Store) OpenMessages(ctx context.Context, t channels.ThreadRef) ([]store.OpenMessage, error) {
	e, err := s.open.Get(ctx, threadKey(t))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the open messages of %s: %w", t, err)
	}
	ms, err := store.DecodeOpenMessages(e.Value())
	if err != nil {
		return nil, fmt.Errorf("read the open messages of %s: %w", t, err)
	}
	return ms, nil
}
