package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/cluster/webshare"
)

// webShared is the web chat's shared state (web.Shared) on the cluster's
// bucket (webshare): the edges serving the web chat show the same chat.
type webShared struct{ l *webshare.Log }

var (
	_ web.Shared      = webShared{}
	_ web.SharedFiles = webShared{}
)

func (s webShared) Put(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	n, err := s.l.Put(ctx, key, value, rev)
	if errors.Is(err, webshare.ErrStale) {
		return 0, fmt.Errorf("%w: %w", web.ErrStale, err)
	}
	return n, err
}

func (s webShared) Delete(ctx context.Context, key string) (uint64, error) {
	return s.l.Delete(ctx, key)
}

func (s webShared) Head(ctx context.Context) (uint64, error) { return s.l.Head(ctx) }

func (s webShared) Purge(ctx context.Context, prefix string) error { return s.l.Purge(ctx, prefix) }

func (s webShared) Follow(ctx context.Context, fn func(web.Change), caughtUp func()) error {
	return s.l.Follow(ctx, func(c webshare.Change) {
		fn(web.Change{Rev: c.Rev, Key: c.Key, Value: c.Value, Deleted: c.Deleted})
	}, caughtUp)
}

func (s webShared) PutFile(ctx context.Context, name string, data []byte) error {
	return s.l.PutFile(ctx, name, data)
}

func (s webShared) GetFile(ctx context.Context, name string) ([]byte, time.Time, error) {
	data, mod, err := s.l.GetFile(ctx, name)
	if errors.Is(err, webshare.ErrNoFile) {
		return nil, mod, fmt.Errorf("%w: %w", fs.ErrNotExist, err)
	}
	return data, mod, err
}

func (s webShared) DeleteFile(ctx context.Context, name string) error {
	return s.l.DeleteFile(ctx, name)
}
