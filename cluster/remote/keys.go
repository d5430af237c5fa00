package remote

import (
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"github.com/acpgw/gateway/cluster/wire"
)

// keysKept is how many given-up operations' keys an Adapter remembers,
// and keyKept for how long (the edges' results bucket keeps a result an
// hour).
const (
	keysKept = 4096
	keyKept  = time.Hour
)

// givenUp remembers the idempotency keys of operations the proxy gave up
// on (no edge answered within GiveUp: the operation may be under way, or
// done, with its answer lost), by what the operation asks. The lane tries
// such an operation again later, as for a local adapter; asked again with
// the same key, an edge answers with the first try's result, or "busy"
// while it is still performing it, instead of performing it twice.
type givenUp struct {
	mu   sync.Mutex // guards keys
	keys map[[sha256.Size]byte]keyAt
}

type keyAt struct {
	key string
	at  time.Time
}

// what names an operation by what it asks (everything but its key).
func what(op wire.Op) ([sha256.Size]byte, bool) {
	op.Key = ""
	b, err := json.Marshal(op)
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(b), true
}

// key returns the key an operation asking w was given up with, or a new
// one.
func (g *givenUp) key(w [sha256.Size]byte, ok bool) string {
	if ok {
		g.mu.Lock()
		k, found := g.keys[w]
		g.mu.Unlock()
		if found && time.Since(k.at) < keyKept {
			return k.key
		}
	}
	return wire.NewKey()
}

// gaveUp remembers key for the operations asking w.
func (g *givenUp) gaveUp(w [sha256.Size]byte, ok bool, key string) {
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.keys == nil {
		g.keys = map[[sha256.Size]byte]keyAt{}
	}
	now := time.Now()
	if len(g.keys) >= keysKept {
		var oldest [sha256.Size]byte
		first := true
		for k, v := range g.keys {
			if now.Sub(v.at) >= keyKept {
				delete(g.keys, k)
			} else if first || v.at.Before(g.keys[oldest].at) {
				oldest, first = k, false
			}
		}
		if len(g.keys) >= keysKept {
			delete(g.keys, oldest)
		}
	}
	g.keys[w] = keyAt{key: key, at: now}
}

// answered forgets w: its operation was performed (or refused).
func (g *givenUp) answered(w [sha256.Size]byte, ok bool) {
	if !ok {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.keys, w)
}
