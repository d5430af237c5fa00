package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
)

// The web chat on several gateways (the edges of a cluster): every change
// of the state is written to a Shared store, and every gateway applies the
// store's changes, in order, to its own state and live streams. An
// operation is decided by the gateway that performs it (ids, times), run on
// a copy of the state it changes, and what the copy changed is written as
// records, one a key; the operation returns once this gateway applied its
// own records. Without Options.Shared the state is this process's alone.

// Shared is a store of the web chat's state that several gateways share:
// keys (dot-separated tokens of letters, digits, '-' and '_') with their
// latest value, and a log of the writes that every gateway follows from
// the start. Its methods are safe for concurrent use.
type Shared interface {
	// Put writes value under key when the key's revision is still rev
	// (0: the key has no value), and returns the write's revision. When
	// another write came first it returns an error wrapping ErrStale.
	Put(ctx context.Context, key string, value []byte, rev uint64) (uint64, error)
	// Delete removes key; the followers are told (Change.Deleted).
	Delete(ctx context.Context, key string) (uint64, error)
	// Purge removes every key under prefix (which ends with "."),
	// without telling the followers.
	Purge(ctx context.Context, prefix string) error
	// Head returns the revision of the latest write.
	Head(ctx context.Context) (uint64, error)
	// Follow calls fn with the latest value of every key, in the order of
	// their revisions, then caughtUp once, then each write as it happens,
	// until ctx ends (it returns nil) or the store fails. fn and caughtUp
	// are called on Follow's goroutine.
	Follow(ctx context.Context, fn func(Change), caughtUp func()) error
}

// SharedFiles keeps the files of a shared chat (the agents' uploads)
// where every gateway reads them. A Shared that implements it shares the
// files too; otherwise each stays with the gateway that received it.
type SharedFiles interface {
	// PutFile keeps data under name, a name no other file had.
	PutFile(ctx context.Context, name string, data []byte) error
	// GetFile returns the file and when it was kept; an error wrapping
	// fs.ErrNotExist when there is none.
	GetFile(ctx context.Context, name string) ([]byte, time.Time, error)
	// DeleteFile removes the file; none is no error.
	DeleteFile(ctx context.Context, name string) error
}

// Change is one write of a Shared store.
type Change struct {
	Rev     uint64 // the write's revision, increasing
	Key     string
	Value   []byte
	Deleted bool
}

// ErrStale is the error of a Shared.Put whose key changed since the
// revision it gave.
var ErrStale = errors.New("web: the shared state changed meanwhile")

// sharedError is a failure of the shared store (unreachable, a timeout):
// not the operation's fault, so it may be retried.
type sharedError struct{ err error }

func (e *sharedError) Error() string { return "web: shared state: " + e.err.Error() }
func (e *sharedError) Unwrap() error { return e.err }

// Bounds of an operation on the shared state.
const (
	// performWait bounds an operation: its writes and the wait for them
	// to come back.
	performWait = 10 * time.Second
	// performTries is how many times an operation is run again when
	// another gateway changed the same key first.
	performTries = 8
)

// Record kinds, the last fixed token of a key t.<thread>.<kind>[.<sub>].
const (
	recInfo    = "i" // title, agent, creation time
	recMessage = "m" // .m.<message id>: a message
	recTyping  = "y"
	recSession = "s"
	recTool    = "x" // .x.<base64url tool call id>: its details
)

// infoRecord is the value of a thread's info key.
type infoRecord struct {
	Title   string    `json:"title"`
	Agent   string    `json:"agent,omitempty"`
	Created time.Time `json:"created"`
}

// messageRecord is the value of a message key: the message without what
// is derived from its text (html, card), which each gateway renders, and
// First, the revision of the message's first write, which orders the
// thread (0 in that first write: its own revision).
type messageRecord struct {
	message
	First uint64 `json:"first,omitempty"`
}

func threadPrefix(id string) string { return "t." + id + "." }

func recordKey(id, kind, sub string) string {
	k := threadPrefix(id) + kind
	if sub != "" {
		k += "." + sub
	}
	return k
}

func toolKey(id, key string) string {
	return recordKey(id, recTool, base64.RawURLEncoding.EncodeToString([]byte(key)))
}

// parsedKey is a key of the shared state taken apart.
type parsedKey struct {
	thread, kind, sub string // sub: a message id or a tool call id
}

// parseKey takes a key of the shared state apart; it is outside input.
func parseKey(key string) (parsedKey, error) {
	parts := strings.Split(key, ".")
	if len(parts) < 3 || parts[0] != "t" || !validID(parts[1]) {
		return parsedKey{}, fmt.Errorf("key %q: not t.<thread>.<kind>", key)
	}
	p := parsedKey{thread: parts[1], kind: parts[2]}
	switch p.kind {
	case recInfo, recTyping, recSession:
		if len(parts) != 3 {
			return p, fmt.Errorf("key %q: extra tokens", key)
		}
	case recMessage:
		if len(parts) != 4 || !validID(parts[3]) {
			return p, fmt.Errorf("key %q: not t.<thread>.m.<message>", key)
		}
		p.sub = parts[3]
	case recTool:
		if len(parts) != 4 {
			return p, fmt.Errorf("key %q: not t.<thread>.x.<tool>", key)
		}
		b, err := base64.RawURLEncoding.DecodeString(parts[3])
		if err != nil || len(b) == 0 {
			return p, fmt.Errorf("key %q: tool id not base64url", key)
		}
		p.sub = string(b)
	default:
		return p, fmt.Errorf("key %q: unknown kind %q", key, p.kind)
	}
	return p, nil
}

// record is one write an operation makes.
type record struct {
	key   string
	value []byte // nil: delete
	new   bool   // a key the operation creates (written after the updates)
}

// clone copies t for an operation: the messages are shared (they are
// replaced, never changed), the maps and lists are the copy's own, and it
// has no subscribers.
func (t *thread) clone() *thread {
	c := *t
	c.msgs = slices.Clone(t.msgs)
	c.byID = make(map[string]*message, len(t.byID))
	for k, v := range t.byID {
		c.byID[k] = v
	}
	if t.tools != nil {
		c.tools = make(map[string]*toolDetail, len(t.tools))
		for k, v := range t.tools {
			c.tools[k] = v
		}
	}
	c.toolOrder = slices.Clone(t.toolOrder)
	c.first = maps.Clone(t.first)
	c.subs = make(map[*subscriber]struct{})
	return &c
}

// perform runs op on a copy of the state (of thread id; of every thread
// when id is ""), writes what it changed to the shared store, and waits
// until this gateway applied it. When another gateway changed one of the
// keys first, it waits for that change and runs op again; when op finds
// no thread or message that this gateway may not have seen yet (made
// through another gateway a moment ago), it catches up and runs op again.
func perform[T any](s *store, id string, op func(*store) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), performWait)
	defer cancel()
	var zero T
	caughtUp := false
	for try := 0; ; try++ {
		s.mu.Lock()
		seen := s.applied
		before := map[string]*thread{}
		// No thread goes cold here (the shared store keeps them all),
		// so a copy never forgets one to make room.
		sc := &store{now: s.now, encode: s.encode, maxInMemory: math.MaxInt, maxMessages: s.maxMessages,
			threads: map[string]*thread{}, tick: s.tick, global: map[*subscriber]struct{}{}}
		var revs map[string]uint64
		if t := s.threads[id]; t != nil {
			before[id], sc.threads[id] = t.clone(), t.clone()
			revs = maps.Clone(t.revs)
		} else if id == "" {
			// Making a thread, forgetting one: their details alone.
			for tid, t := range s.threads {
				c := *t
				c.msgs, c.byID, c.tools, c.toolOrder, c.first = nil, nil, nil, nil, nil
				c.subs = map[*subscriber]struct{}{}
				b := c
				before[tid], sc.threads[tid] = &b, &c
			}
		}
		s.mu.Unlock()
		v, err := op(sc) // without the lock: it may render
		if (errors.Is(err, errNoThread) || errors.Is(err, errNoMessage)) && !caughtUp {
			caughtUp = true
			head, herr := s.shared.Head(ctx)
			if herr != nil {
				return zero, &sharedError{herr}
			}
			if head > seen {
				if err := s.waitApplied(ctx, head); err != nil {
					return zero, &sharedError{err}
				}
				continue
			}
		}
		if err != nil {
			return zero, err
		}
		recs := diffThreads(before, sc.threads)
		last, err := s.write(ctx, recs, revs)
		if errors.Is(err, ErrStale) && try < performTries {
			if err := s.waitApplied(ctx, seen+1); err != nil {
				return zero, &sharedError{err}
			}
			continue
		}
		if err != nil {
			return zero, &sharedError{err}
		}
		if err := s.waitApplied(ctx, last); err != nil {
			return zero, &sharedError{err}
		}
		return v, nil
	}
}

// write writes recs (revs the keys' revisions in the state the records
// were made from) and returns the last revision written.
func (s *store) write(ctx context.Context, recs []record, revs map[string]uint64) (uint64, error) {
	var last uint64
	for _, r := range recs {
		var rev uint64
		var err error
		switch {
		case r.value == nil && strings.HasSuffix(r.key, "."):
			// A whole thread: its records silently, then its info
			// with a word to the followers.
			if err = s.shared.Purge(ctx, r.key); err == nil {
				rev, err = s.shared.Delete(ctx, r.key+recInfo)
			}
		case r.value == nil:
			rev, err = s.shared.Delete(ctx, r.key)
		default:
			rev, err = s.shared.Put(ctx, r.key, r.value, revs[r.key])
		}
		if err != nil {
			return 0, err
		}
		last = max(last, rev)
	}
	return last, nil
}

// waitApplied waits until the change of revision rev was applied here.
func (s *store) waitApplied(ctx context.Context, rev uint64) error {
	for {
		s.mu.Lock()
		done, wake := s.applied >= rev, s.appliedCh
		s.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("waiting for the change %d to come back: %w", rev, ctx.Err())
		}
	}
}

// diffThreads returns the records of what an operation changed from
// before to after: updates first, then new keys, then deletions, so that
// an operation that fails on a stale key wrote nothing.
func diffThreads(before, after map[string]*thread) []record {
	var out []record
	for id, a := range after {
		b := before[id]
		if b == nil || b.title != a.title || b.agent != a.agent {
			out = append(out, record{key: recordKey(id, recInfo, ""), value: mustJSON(infoRecord{Title: a.title, Agent: a.agent, Created: a.created}), new: b == nil})
		}
		if b == nil {
			b = &thread{}
		}
		if a.typing != b.typing {
			out = append(out, record{key: recordKey(id, recTyping, ""), value: mustJSON(typingBody{Typing: a.typing})})
		}
		if a.session != b.session {
			out = append(out, record{key: recordKey(id, recSession, ""), value: mustJSON(a.session)})
		}
		for _, m := range a.msgs {
			if old := b.byID[m.ID]; old != m && (old == nil || !sameButTool(*old, *m)) {
				// The tool's details go in their own record: a
				// diff of a large file would make the line's too
				// large to write.
				r := messageRecord{message: *m, First: b.first[m.ID]}
				r.HTML, r.Card, r.Tool = "", nil, nil
				out = append(out, record{key: recordKey(id, recMessage, m.ID), value: mustJSON(r), new: old == nil})
			}
		}
		for mid := range b.byID {
			if a.byID[mid] == nil {
				out = append(out, record{key: recordKey(id, recMessage, mid)})
			}
		}
		for k, d := range a.tools {
			if old := b.tools[k]; old != d {
				out = append(out, record{key: toolKey(id, k), value: mustJSON(d), new: old == nil})
			}
		}
		for k := range b.tools {
			if a.tools[k] == nil {
				out = append(out, record{key: toolKey(id, k)})
			}
		}
	}
	for id := range before {
		if after[id] == nil {
			out = append(out, record{key: threadPrefix(id)})
		}
	}
	rank := func(r record) int {
		switch {
		case r.value == nil:
			return 2
		case r.new:
			return 1
		}
		return 0
	}
	slices.SortStableFunc(out, func(x, y record) int { return rank(x) - rank(y) })
	return out
}

// applyChange applies a change of the shared state, received from the
// store, to this gateway's state and live streams. A change it cannot
// read is returned as an error and changes nothing. Records of a thread
// whose info did not come yet wait for it.
func (s *store) applyChange(c Change) error {
	defer func() {
		if s.afterApply != nil {
			s.afterApply() // before the change counts as applied
		}
		s.mu.Lock()
		if c.Rev > s.applied {
			s.applied = c.Rev
			close(s.appliedCh)
			s.appliedCh = make(chan struct{})
		}
		s.mu.Unlock()
	}()
	k, err := parseKey(c.Key)
	if err != nil {
		return err
	}
	// Decode and render before locking.
	var info infoRecord
	var msg messageRecord
	var typing typingBody
	var sess *sessionView
	var tool toolDetail
	if !c.Deleted {
		switch k.kind {
		case recInfo:
			err = json.Unmarshal(c.Value, &info)
		case recMessage:
			if err = json.Unmarshal(c.Value, &msg); err == nil {
				if err = checkSaved(&msg.message); err == nil && msg.ID != k.sub {
					err = fmt.Errorf("message %q under the key of %q", msg.ID, k.sub)
				}
			}
			msg.HTML = renderFor(msg.Role, msg.Text)
			msg.Card = cardFor(msg.Kind, msg.Text)
		case recTyping:
			err = json.Unmarshal(c.Value, &typing)
		case recSession:
			err = json.Unmarshal(c.Value, &sess)
		case recTool:
			err = json.Unmarshal(c.Value, &tool)
		}
		if err != nil {
			return fmt.Errorf("key %s: %w", c.Key, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[k.thread]
	if k.kind == recInfo {
		if c.Deleted {
			delete(s.pending, k.thread)
			if t != nil {
				for sub := range t.subs {
					s.dropLocked(sub)
				}
				s.gone = append(s.gone, keptFiles(t)...)
				delete(s.threads, k.thread)
				s.markLocked(nil)
				s.publishRemovedLocked(k.thread)
			}
			return nil
		}
		if t == nil {
			s.tick++
			t = &thread{id: k.thread, title: titleFrom(info.Title), agent: info.Agent, created: info.Created,
				seq: s.tick, active: s.tick, activeAt: info.Created,
				byID: make(map[string]*message), subs: make(map[*subscriber]struct{}),
				revs: map[string]uint64{c.Key: c.Rev}}
			s.threads[k.thread] = t
			s.markLocked(t)
			s.publishThreadLocked(t)
			// What came before the info, in order.
			for _, p := range s.pending[k.thread] {
				s.applyLocked(t, p.k, p.c, p.v)
			}
			delete(s.pending, k.thread)
			return nil
		}
		t.revs[c.Key] = c.Rev
		if title := titleFrom(info.Title); t.title != title || t.agent != info.Agent {
			t.title, t.agent = title, info.Agent
			s.markLocked(t)
			s.publishThreadLocked(t)
		}
		return nil
	}
	var v any
	switch k.kind {
	case recMessage:
		v = firstMessage{&msg.message, cmp0(msg.First, c.Rev)}
	case recTyping:
		v = typing.Typing
	case recSession:
		v = sess
	case recTool:
		v = &tool
	}
	if t == nil {
		if c.Deleted {
			return nil // nothing of it here to remove
		}
		if s.pending == nil {
			s.pending = map[string][]pendingChange{}
		}
		s.pending[k.thread] = append(s.pending[k.thread], pendingChange{k, c, v})
		return nil
	}
	s.applyLocked(t, k, c, v)
	return nil
}

// firstMessage is a decoded message and the revision of its first write.
type firstMessage struct {
	m     *message
	first uint64
}

// dropOrphans forgets the records waiting for a thread's details and
// returns their threads' key prefixes. Called once every record written
// so far was applied: a thread's details are written before any other
// record of it, so these threads are gone (records written while they
// were being deleted).
func (s *store) dropOrphans() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range s.pending {
		out = append(out, threadPrefix(id))
	}
	s.pending = nil
	slices.Sort(out)
	return out
}

// pendingChange is a decoded change of a thread whose info has not come.
type pendingChange struct {
	k parsedKey
	c Change
	v any
}

func cmp0(a, b uint64) uint64 {
	if a != 0 {
		return a
	}
	return b
}

// applyLocked applies a decoded record (not info) to thread t, publishing
// to its live streams what the same change made here would.
func (s *store) applyLocked(t *thread, k parsedKey, c Change, v any) {
	if c.Deleted {
		delete(t.revs, c.Key)
	} else {
		t.revs[c.Key] = c.Rev
	}
	switch k.kind {
	case recMessage:
		old := t.byID[k.sub]
		if c.Deleted {
			if old != nil {
				delete(t.byID, k.sub)
				delete(t.first, k.sub)
				t.msgs = slices.DeleteFunc(t.msgs, func(m *message) bool { return m == old })
				s.markLocked(t)
			}
			return
		}
		fm := v.(firstMessage)
		m := fm.m
		// A tool's line shows the details kept for its key (their own
		// record), or those it showed.
		m.Tool = nil
		if m.Kind == string(channels.KindTool) && m.Key != "" {
			if m.Tool = t.tools[m.Key]; m.Tool == nil && old != nil {
				m.Tool = old.Tool
			}
		}
		t.byID[m.ID] = m
		if old != nil {
			t.msgs[slices.Index(t.msgs, old)] = m
		} else {
			if t.first == nil {
				t.first = make(map[string]uint64)
			}
			t.first[m.ID] = fm.first
			i, _ := slices.BinarySearchFunc(t.msgs, fm.first, func(x *message, f uint64) int {
				if t.first[x.ID] < f {
					return -1
				}
				return 1
			})
			t.msgs = slices.Insert(t.msgs, i, m)
		}
		if old == nil || !m.Updated.Equal(old.Updated) {
			s.touchLocked(t, latest(m.Time, m.Updated, t.activeAt))
		}
		s.markLocked(t)
		s.publishMessageLocked(t, *m)
	case recTyping:
		on := !c.Deleted && v.(bool)
		if t.typing != on {
			t.typing = on
			s.publishLocked(t, newEvent("typing", typingBody{Typing: on}, s.encode))
			s.publishThreadLocked(t)
		}
	case recSession:
		var sv *sessionView
		if !c.Deleted {
			sv = v.(*sessionView)
		}
		t.session = sv
		s.publishLocked(t, newEvent("session", sv, s.encode))
	case recTool:
		if c.Deleted {
			delete(t.tools, k.sub)
			t.toolOrder = slices.DeleteFunc(t.toolOrder, func(x string) bool { return x == k.sub })
			return
		}
		if t.tools == nil {
			t.tools = make(map[string]*toolDetail)
		}
		if t.tools[k.sub] == nil {
			t.toolOrder = append(t.toolOrder, k.sub)
		}
		d := v.(*toolDetail)
		t.tools[k.sub] = d
		// The tool's line shows them (as setToolDetail does).
		for i := len(t.msgs) - 1; i >= 0; i-- {
			m := t.msgs[i]
			if m.Kind != string(channels.KindTool) || m.Key != k.sub {
				continue
			}
			shown := *m
			shown.Tool = d
			t.msgs[i], t.byID[m.ID] = &shown, &shown
			s.markLocked(t)
			s.publishMessageLocked(t, shown)
			break
		}
	}
}

// sameButTool reports whether two versions of a message differ at most
// in their tool's details.
func sameButTool(a, b message) bool {
	a.Tool, b.Tool = nil, nil
	return reflect.DeepEqual(a, b)
}

// performQuiet is perform for the changes whose caller takes no error: a
// failure goes to sharedErr.
func (s *store) performQuiet(id string, op func(*store)) {
	_, err := perform(s, id, func(sc *store) (struct{}, error) { op(sc); return struct{}{}, nil })
	if err != nil && s.sharedErr != nil {
		s.sharedErr(err)
	}
}

// latest returns the latest of the times.
func latest(ts ...time.Time) time.Time {
	var l time.Time
	for _, t := range ts {
		if t.After(l) {
			l = t
		}
	}
	return l
}

// permanent marks err permanent (channels.Permanent), unless the shared
// state failed: then the caller may try again.
func permanent(err error) error {
	if se := (*sharedError)(nil); errors.As(err, &se) {
		return err
	}
	return channels.Permanent(err)
}

// messageGone is the error of an edit of message what: the message is
// gone (channels.ErrMessageGone), unless the shared state failed.
func messageGone(what string, err error) error {
	if se := (*sharedError)(nil); errors.As(err, &se) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w (%w)", what, channels.ErrMessageGone, err)
}
