package discord

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"unicode/utf8"
)

// maxCustomID is Discord's limit of a button's custom_id, in characters.
const maxCustomID = 100

// maxLongIDs bounds the remembered long option ids.
const maxLongIDs = 1000

// buttonIDs maps option ids to button custom_ids. An id that fits is its
// own custom_id; a longer one gets a hash, remembered so that a click can
// be mapped back. After a restart a hash is unknown and is delivered as
// is: the session answers that the prompt is no longer waiting.
type buttonIDs struct {
	mu    sync.Mutex        // guards the fields below
	long  map[string]string // custom_id → option id
	order []string          // custom_ids, oldest first
}

func newButtonIDs() *buttonIDs { return &buttonIDs{long: map[string]string{}} }

// customID returns the custom_id of option id.
func (b *buttonIDs) customID(id string) string {
	if utf8.RuneCountInString(id) <= maxCustomID {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	c := "h:" + hex.EncodeToString(sum[:20])
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.long[c]; !ok {
		if len(b.order) >= maxLongIDs {
			delete(b.long, b.order[0])
			b.order = b.order[1:]
		}
		b.order = append(b.order, c)
	}
	b.long[c] = id
	return c
}

// option returns the option id of a clicked custom_id.
func (b *buttonIDs) option(customID string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id, ok := b.long[customID]; ok {
		return id
	}
	return customID
}
