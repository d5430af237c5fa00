package projector

import (
	"strings"
	"unicode/utf8"
)

// LongRepeatRunes is the length from which an exact immediate repeat of a
// chunk is taken for a re-send and dropped. Shorter repeats ("ha", "ha";
// "\n\n", "\n\n") are legitimate text and kept.
const LongRepeatRunes = 24

type chunkMode uint8

const (
	modeUnknown chunkMode = iota
	modeDelta
	modeSnapshot
)

// Accumulator turns a stream of message chunks into deltas. Agents send
// either deltas (each chunk continues the text) or cumulative snapshots
// (each chunk starts with all the text of the current message so far);
// some repeat chunks. The transcript store and the projector share it so
// that both see the same text.
//
// The first chunk that either extends the current message's text (a
// snapshot) or does not (a delta) fixes the message's mode. A delta stream
// whose second chunk begins with the whole first chunk cannot be told from
// a snapshot stream; it is read as snapshots.
//
// The zero value is ready to use.
type Accumulator struct {
	msgID string
	cur   strings.Builder // text of the current message
	mode  chunkMode
	last  string // previous chunk, for the long-repeat rule
	any   bool   // a chunk was accepted since Reset
}

// Add takes one chunk and returns the text to append to what was delivered
// before ("" when the chunk adds nothing) and whether the chunk starts a new
// agent message (a new messageID after earlier text).
func (a *Accumulator) Add(messageID, chunk string) (delta string, newMessage bool) {
	if chunk == "" {
		return "", false
	}
	if messageID != "" && messageID != a.msgID {
		newMessage = a.any
		a.msgID = messageID
		a.cur.Reset()
		a.mode = modeUnknown
		a.last = ""
	}
	cur := a.cur.String()
	switch {
	case a.mode != modeDelta && len(cur) > 0 && len(chunk) > len(cur) && strings.HasPrefix(chunk, cur):
		a.mode = modeSnapshot
		delta = chunk[len(cur):]
	case a.mode == modeSnapshot && strings.HasPrefix(cur, chunk):
		// A repeated (or shorter) snapshot: nothing new.
		a.last = chunk
		return "", false
	case chunk == a.last && utf8.RuneCountInString(chunk) >= LongRepeatRunes:
		// An exact immediate repeat of a long chunk is a re-send.
		return "", false
	default:
		if len(cur) > 0 && a.mode == modeUnknown {
			a.mode = modeDelta
		}
		delta = chunk
	}
	a.last = chunk
	if a.mode != modeDelta {
		// Only snapshot detection reads the message text; a message
		// known to be deltas does not need it.
		a.cur.WriteString(delta)
	}
	if delta != "" {
		a.any = true
	} else {
		newMessage = false
	}
	return delta, newMessage && delta != ""
}

// Reset forgets everything (a turn ended).
func (a *Accumulator) Reset() { *a = Accumulator{} }
