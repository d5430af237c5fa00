package web

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// Memory bounds of the in-memory state (see also defaultMaxThreadsInMemory).
const (
	// defaultMaxMessages is how many messages a thread keeps; the oldest
	// are forgotten first and can no longer be edited.
	defaultMaxMessages = 1000
	// maxTitleRunes bounds a thread title (given or taken from the first
	// prompt).
	maxTitleRunes = 80
	// subscriberBuffer is how many events a live stream may fall behind
	// before it is dropped (the browser reconnects and gets the state).
	subscriberBuffer = 256
)

// Message roles.
const (
	roleUser      = "user"
	roleAssistant = "assistant"
	roleSystem    = "system"
)

// Authors of messages the gateway writes.
const (
	authorAgent   = "agent"
	authorGateway = "gateway"
)

// Errors of the state, mapped to HTTP statuses by the API and wrapped by the
// adapter methods.
var (
	errNoThread  = errors.New("no such thread")
	errNoMessage = errors.New("no such message")
)

// option is one button of a prompt, as the API shows it.
type option struct {
	ID    string `json:"id"`
	Label string `json:"label"`
	Style string `json:"style,omitempty"`
}

// message is one message of a thread, as the API shows it. Stored messages
// are replaced, never changed in place once stored, so a copy may share the
// Options slice, and a pointer taken with the store locked may be read
// after it is unlocked.
type message struct {
	ID     string `json:"id"`
	Role   string `json:"role"`
	Author string `json:"author"`
	Kind   string `json:"kind"`
	// Key is the edit key dispatch gave (a tool call id, "plan").
	Key     string    `json:"key,omitempty"`
	Text    string    `json:"text"`
	Edits   int       `json:"edits"`
	Options []option  `json:"options,omitempty"`
	Time    time.Time `json:"time"`
	// HTML is Text rendered for the page (renderFor); empty for
	// people's messages, which show as written. The state file leaves it
	// out.
	HTML string `json:"html,omitempty"`
	// Card is a permission prompt's text taken apart for the page
	// (cardFor); derived from the text like HTML.
	Card *permCard `json:"card,omitempty"`
	// Tool is what the tool of a tool line showed (input, output, diffs,
	// locations), when the gateway knows it.
	Tool *toolDetail `json:"tool,omitempty"`
	// Files are the files a person attached, images with a preview.
	Files []sentFile `json:"files,omitempty"`
	// Updated is when the gateway last edited the message (an answered
	// prompt); zero for a message never edited.
	Updated time.Time `json:"updated,omitzero"`
	// Form is the form a message of kind "form" asks, until it is
	// answered (edited).
	Form *formView `json:"form,omitempty"`
	// Asked marks a form's message once answered (edited into how it was
	// answered): the page shows it as an answer, apart from notices.
	Asked bool `json:"asked,omitempty"`
	// Reactions are the gateway's reactions on the message, emoji.
	Reactions []string `json:"reactions,omitempty"`
}

// threadInfo is one entry of the thread list, as the API shows it.
type threadInfo struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Created time.Time `json:"created"`
	Typing  bool      `json:"typing"`
	// Agent is the name of the agent the thread uses, once it started.
	Agent string `json:"agent,omitempty"`
	// Active is the time of the thread's last message or edit; the list
	// is sorted by it, the most recent first.
	Active time.Time `json:"active"`
	// Activity orders the list: the thread with the highest was active
	// last. A "thread" event carries it, so a client that applies the
	// change keeps the list in the same order as GET /api/threads.
	Activity uint64 `json:"activity"`
}

// thread is the state of one thread.
type thread struct {
	id      string
	title   string
	agent   string // the agent's name, once it started
	created time.Time
	seq     uint64 // store.tick at creation, for the list order
	active  uint64 // store.tick at the last activity, for eviction
	// activeAt is the time of the last activity (the list shows it).
	activeAt time.Time
	rev      uint64 // store.rev at the last change to save, for the state file
	typing   bool
	// cold is true when the thread does not count against
	// store.maxInMemory (cold.go); onDisk when its messages and tools
	// were written to its cold file and left memory (msgs, byID and
	// tools are then nil).
	cold, onDisk bool
	// saved counts the times its messages left memory for its file: a
	// read of the file that began before the last is stale.
	saved uint64
	msgs  []*message // oldest first
	byID  map[string]*message
	subs  map[*subscriber]struct{}
	// tools are the details of the thread's recent tool calls by id, for
	// their lines; toolOrder is their arrival order (bounded by
	// maxToolDetails).
	tools     map[string]*toolDetail
	toolOrder []string
	// session is what the thread's session is (the header), nil until
	// the gateway shows it.
	session *sessionView
	// first orders the messages of a shared thread by id: the revision
	// of each message's first write (shared.go); revs are the revisions
	// of the thread's keys, as applied.
	first map[string]uint64
	revs  map[string]uint64
}

func (t *thread) info() threadInfo {
	return threadInfo{ID: t.id, Title: t.title, Created: t.created, Typing: t.typing, Agent: t.agent, Active: t.activeAt, Activity: t.active}
}

// store is the adapter's in-memory state: threads, their messages and
// typing state, and the live event subscribers. Every change is published
// to the subscribers of the thread (and thread-list changes to all), and
// every change the state file keeps (all but typing) counts in rev and
// calls changed.
type store struct {
	now func() time.Time
	// encode encodes live events (mustJSON; tests block it to stand for
	// slow encoding). It is called by streams, never with mu held.
	encode func(any) []byte
	// maxInMemory is how many threads keep their messages in memory
	// (cold.go); there is no bound on the number of threads.
	maxInMemory int
	maxMessages int
	// readFile reads a cold thread's file (os.ReadFile; tests hold it).
	readFile func(string) ([]byte, error)
	// changed, if set, is called with mu held after each change to save;
	// it must not block or take locks.
	changed func()

	mu      sync.Mutex // guards the fields below
	threads map[string]*thread
	tick    uint64
	rev     uint64 // count of changes to save
	// global are every live stream: all of them read the changes of the
	// thread list from feed (listfeed.go).
	global map[*subscriber]struct{}
	feed   listFeed
	// coldDir, when set, is where cold threads' files go (cold.go): set
	// while a state file is saved. goneCold are the ids of threads
	// deleted or forgotten whose cold files the saver removes.
	coldDir  string
	goneCold []string
	// gone are the kept files of threads deleted or forgotten, for the
	// adapter to remove (takeGone).
	gone []string

	// shared, if set, is the state shared with other gateways: the
	// changes are written there and applied here as they come back
	// (shared.go). sharedErr receives the failures of the changes whose
	// caller takes no error.
	shared    Shared
	sharedErr func(error)
	// afterApply, if set, is called after each shared change is applied
	// and before it counts as applied, without mu held: the kept files
	// of the threads it removed go before their removal returns.
	afterApply func()
	applied    uint64        // the last revision applied
	appliedCh  chan struct{} // closed and replaced at each applied change
	pending    map[string][]pendingChange
}

func newStore() *store {
	return &store{
		now:         time.Now,
		encode:      mustJSON,
		maxInMemory: defaultMaxThreadsInMemory,
		maxMessages: defaultMaxMessages,
		readFile:    os.ReadFile,
		threads:     make(map[string]*thread),
		global:      make(map[*subscriber]struct{}),
		feed:        listFeed{tail: newListFrame()},
		appliedCh:   make(chan struct{}),
	}
}

// newID returns a random id of 12 hex digits. Random ids keep threads of an
// earlier run (whose bindings the gateway may have stored) apart from new
// ones.
func newID() string {
	var b [6]byte
	rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

// titleFrom makes a thread title from a prompt: its first non-empty line,
// cut to maxTitleRunes.
func titleFrom(text string) string {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		line = plainTitle(line)
		if line == "" {
			continue
		}
		if utf8.RuneCountInString(line) > maxTitleRunes {
			r := []rune(line)
			line = strings.TrimSpace(string(r[:maxTitleRunes-1])) + "…"
		}
		return line
	}
	return ""
}

// markup is the Markdown a title leaves out: a heading's, quote's or
// list item's marker at the start, emphasis and code marks.
var markup = regexp.MustCompile("^(?:#{1,6}|>|[-*+]|\\d+[.)])\\s+|\\*\\*|__|`+|~~")

// plainTitle returns a line of Markdown as plain text, roughly.
func plainTitle(line string) string {
	for {
		next := strings.TrimSpace(markup.ReplaceAllString(line, ""))
		if next == line {
			return line
		}
		line = next
	}
}

// setTitle renames thread id: the first line of title, as plain text.
// It returns errNoThread if the thread does not exist and an error for a
// title with no text.
func (s *store) setTitle(id, title string) (threadInfo, error) {
	title = titleFrom(title)
	if title == "" {
		return threadInfo{}, errors.New("the title is empty")
	}
	if s.shared != nil {
		return perform(s, id, func(sc *store) (threadInfo, error) { return sc.setTitle(id, title) })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return threadInfo{}, err
	}
	if t.title != title {
		t.title = title
		s.markLocked(t)
		s.publishThreadLocked(t)
	}
	return t.info(), nil
}

// setAgent records the agent thread id uses. Unknown threads are
// ignored.
func (s *store) setAgent(id, agent string) {
	if s.shared != nil {
		s.performQuiet(id, func(sc *store) { sc.setAgent(id, agent) })
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[id]
	if t == nil || t.agent == agent {
		return
	}
	t.agent = agent
	s.markLocked(t)
	s.publishThreadLocked(t)
}

// isTyping reports whether a turn runs in thread id.
func (s *store) isTyping(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.threads[id]
	return t != nil && t.typing
}

// deleteThread forgets thread id and its messages and ends its streams.
// It returns errNoThread if the thread does not exist.
func (s *store) deleteThread(id string) error {
	if s.shared != nil {
		_, err := perform(s, id, func(sc *store) (struct{}, error) { return struct{}{}, sc.deleteThread(id) })
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id) // its kept files are named in its messages
	if err != nil {
		return err
	}
	s.forgetLocked(t)
	return nil
}

// takeGone returns the kept files of the threads deleted or forgotten
// since the last call.
func (s *store) takeGone() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gone
	s.gone = nil
	return g
}

// createThread adds a thread. It never refuses one for want of room:
// past the memory bound another thread goes to disk (cold.go).
func (s *store) createThread(title string) (threadInfo, error) {
	if s.shared != nil {
		return perform(s, "", func(sc *store) (threadInfo, error) { return sc.createThread(title) })
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := newID()
	for s.threads[id] != nil {
		id = newID()
	}
	s.tick++
	now := s.now()
	t := &thread{
		id:       id,
		title:    titleFrom(title),
		created:  now,
		seq:      s.tick,
		active:   s.tick,
		activeAt: now,
		byID:     make(map[string]*message),
		subs:     make(map[*subscriber]struct{}),
	}
	s.threads[id] = t
	s.markLocked(t)
	s.publishThreadLocked(t)
	s.evictLocked(t)
	return t.info(), nil
}

// threadList returns the threads, the most recently active first.
func (s *store) threadList() []threadInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threadListLocked()
}

func (s *store) threadListLocked() []threadInfo {
	list := make([]threadInfo, 0, len(s.threads))
	for _, t := range s.threads {
		list = append(list, t.info())
	}
	slices.SortFunc(list, func(a, b threadInfo) int { return cmp.Compare(b.Activity, a.Activity) })
	return list
}

// hasThread reports whether thread id exists.
func (s *store) hasThread(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.threads[id] != nil
}

// addMessage appends m to thread id, giving it an id and a time, and
// returns the stored copy. The first user message of an untitled thread
// titles it. It returns errNoThread if the thread does not exist.
func (s *store) addMessage(id string, m message) (message, error) {
	if s.shared != nil {
		return perform(s, id, func(sc *store) (message, error) { return sc.addMessage(id, m) })
	}
	m.HTML = renderFor(m.Role, m.Text) // before locking: it takes time
	m.Card = cardFor(m.Kind, m.Text)
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return message{}, err
	}
	m.ID = newID()
	for t.byID[m.ID] != nil {
		m.ID = newID()
	}
	m.Time = s.now()
	m.Edits = 0
	if m.Kind == string(channels.KindTool) && m.Key != "" {
		m.Tool = t.tools[m.Key]
	}
	stored := m
	t.msgs = append(t.msgs, &stored)
	t.byID[stored.ID] = &stored
	if n := len(t.msgs) - s.maxMessages; n > 0 {
		// The oldest leave by slicing, not by copying the rest: a
		// thread at its bound copies its messages only when append
		// moves them, once every many messages.
		for i, old := range t.msgs[:n] {
			delete(t.byID, old.ID)
			t.msgs[i] = nil // the array may outlive this slice
		}
		t.msgs = t.msgs[n:]
	}
	s.touchLocked(t, m.Time)
	s.markLocked(t) // the title below is part of the same change
	s.publishMessageLocked(t, stored)
	if m.Role == roleUser && t.title == "" {
		t.title = titleFrom(m.Text)
		s.publishThreadLocked(t)
	}
	return stored, nil
}

// editMessage replaces the kind, key and text of an assistant message and
// removes its options (an edited prompt was answered). It returns
// errNoThread or errNoMessage when there is nothing to edit; messages of
// people cannot be edited.
func (s *store) editMessage(id, msgID, kind, key, text string) error {
	if s.shared != nil {
		_, err := perform(s, id, func(sc *store) (struct{}, error) { return struct{}{}, sc.editMessage(id, msgID, kind, key, text) })
		return err
	}
	html := renderFor(roleAssistant, text) // before locking: it takes time
	card := cardFor(kind, text)
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return err
	}
	m := t.byID[msgID]
	if m == nil || m.Role != roleAssistant {
		return errNoMessage
	}
	edited := *m
	edited.Kind, edited.Key, edited.Text, edited.HTML, edited.Card = kind, key, text, html, card
	if kind == string(channels.KindTool) && key != "" && t.tools[key] != nil {
		edited.Tool = t.tools[key]
	}
	edited.Updated = s.now()
	edited.Options = nil
	edited.Asked = m.Asked || m.Kind == kindForm
	edited.Form = nil
	edited.Edits++
	// A new message replaces the old one: a stored message never changes,
	// so a save can read it without the lock.
	t.byID[msgID] = &edited
	for i := len(t.msgs) - 1; i >= 0; i-- {
		if t.msgs[i] == m {
			t.msgs[i] = &edited
			break
		}
	}
	s.touchLocked(t, edited.Updated)
	s.markLocked(t)
	s.publishMessageLocked(t, edited)
	return nil
}

// message returns a copy of message msgID of thread id.
func (s *store) message(id, msgID string) (message, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return message{}, err
	}
	m := t.byID[msgID]
	if m == nil {
		return message{}, errNoMessage
	}
	return *m, nil
}

// messages returns copies of the messages of thread id, oldest first, and
// whether the typing indicator is shown.
func (s *store) messages(id string) ([]message, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return nil, false, err
	}
	return t.copyLocked(), t.typing, nil
}

func (t *thread) copyLocked() []message {
	out := make([]message, len(t.msgs))
	for i, m := range t.msgs {
		out[i] = *m
	}
	return out
}

// setTyping shows or clears the typing indicator of thread id.
func (s *store) setTyping(id string, on bool) error {
	if s.shared != nil {
		_, err := perform(s, id, func(sc *store) (struct{}, error) { return struct{}{}, sc.setTyping(id, on) })
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return err
	}
	if t.typing == on {
		return nil
	}
	t.typing = on
	s.publishLocked(t, newEvent("typing", typingBody{Typing: on}, s.encode))
	s.publishThreadLocked(t)
	return nil
}

// snapshot is the state a new stream starts with.
type snapshot struct {
	threads  []threadInfo
	messages []message // nil for the thread-list stream
	typing   bool
	session  *sessionView // nil until the gateway shows it
}

// setSession records the session of thread id and publishes it as a
// "session" event. Unknown threads are ignored.
func (s *store) setSession(id string, v *sessionView) {
	if s.shared != nil {
		s.performQuiet(id, func(sc *store) { sc.setSession(id, v) })
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return
	}
	t.session = v
	s.markLocked(t) // saved: the line is back after a restart
	s.publishLocked(t, newEvent("session", v, s.encode))
}

// session returns the session of thread id, nil when not shown yet.
func (s *store) session(id string) *sessionView {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.threads[id]; t != nil {
		return t.session
	}
	return nil
}

// react adds or removes an emoji of the gateway's reactions on message
// msgID of thread id, and publishes the message when that changes it.
func (s *store) react(id, msgID, emoji string, add bool) error {
	if s.shared != nil {
		_, err := perform(s, id, func(sc *store) (struct{}, error) { return struct{}{}, sc.react(id, msgID, emoji, add) })
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, err := s.threadLocked(id)
	if err != nil {
		return err
	}
	m := t.byID[msgID]
	if m == nil {
		return errNoMessage
	}
	rs, changed := withReaction(m.Reactions, emoji, add)
	if !changed {
		return nil
	}
	edited := *m
	edited.Reactions = rs
	t.byID[msgID] = &edited
	for i := len(t.msgs) - 1; i >= 0; i-- {
		if t.msgs[i] == m {
			t.msgs[i] = &edited
			break
		}
	}
	s.markLocked(t)
	s.publishMessageLocked(t, edited)
	return nil
}

// touchLocked records activity in t and publishes its entry of the list,
// whose activity and time changed even when it stays at the top: a list
// change costs a map entry of the list feed, sent at most once a
// listInterval (listfeed.go).
func (s *store) touchLocked(t *thread, now time.Time) {
	s.tick++
	t.active = s.tick
	t.activeAt = now
	s.publishThreadLocked(t)
}

// markLocked counts a change the state file keeps: a change of thread t,
// or of the set of threads when t is nil.
func (s *store) markLocked(t *thread) {
	s.rev++
	if t != nil {
		t.rev = s.rev
	}
	if s.changed != nil {
		s.changed()
	}
}

// restore adds threads read from the state file to an empty store, within
// the memory bounds: the most recently active threads keep their messages
// in memory, the others go cold (cold.go; without coldDir they are left
// out), and each keeps its newest messages. The creation and activity
// orders of the file are kept, renumbered without ties. It returns how
// many threads are out of memory (cold or left out) and how many messages
// the bounds left out; the file is then due to be rewritten.
func (s *store) restore(ts []*thread) (threads, msgs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ts = slices.Clone(ts)
	slices.SortFunc(ts, func(a, b *thread) int { return cmp.Or(cmp.Compare(a.seq, b.seq), strings.Compare(a.id, b.id)) })
	for i, t := range ts {
		t.seq = s.tick + uint64(i) + 1
	}
	s.tick += uint64(len(ts))
	slices.SortFunc(ts, func(a, b *thread) int { return cmp.Or(cmp.Compare(a.active, b.active), cmp.Compare(a.seq, b.seq)) })
	for _, t := range ts {
		s.tick++
		t.active = s.tick
		// The time of the last activity is saved since version 2; before,
		// the newest message's time (or edit) stands for it.
		t.activeAt = later(t.activeAt, t.created)
		for _, m := range t.msgs {
			if m.Time.After(t.activeAt) {
				t.activeAt = m.Time
			}
			if m.Updated.After(t.activeAt) {
				t.activeAt = m.Updated
			}
		}
		if n := len(t.msgs) - s.maxMessages; n > 0 {
			for _, old := range t.msgs[:n] {
				delete(t.byID, old.ID)
			}
			t.msgs = append(t.msgs[:0:0], t.msgs[n:]...)
			msgs += n
		}
		s.threads[t.id] = t
	}
	s.evictLocked(nil)
	for _, t := range s.threads {
		if t.cold {
			threads++
		}
	}
	threads += len(ts) - len(s.threads)
	if msgs > 0 {
		s.markLocked(nil)
	}
	return threads, msgs
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// typingBody is the JSON of "typing" events.
type typingBody struct {
	Typing bool `json:"typing"`
}

// threadsBody is the JSON of GET /api/threads and of "threads" events.
type threadsBody struct {
	Threads []threadInfo `json:"threads"`
}

// mustJSON encodes values that always encode (strings, numbers, times).
// It leaves <, > and & as they are: nothing reads this JSON as HTML (it
// goes out as application/json with nosniff, as event streams, or to the
// state file), and a message's html would grow by half escaped.
func mustJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("web: encoding state: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
