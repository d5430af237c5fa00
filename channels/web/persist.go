package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
	"unicode/utf8"
)

// stateVersion is the format version of the state file this package
// writes and reads. A file of a newer version is refused (and left alone);
// a change that a reader of an older version would misread needs a new
// version.
//
// Version 2 added cold threads (cold.go): their entry says "cold" and
// holds no messages, which a reader of version 1 would take for a thread
// without messages.
const stateVersion = 2

// Pacing of the state file.
const (
	// saveInterval is the debounce of saves: a change is written at most
	// this long after it happened, and saves are at least this far apart.
	saveInterval = 500 * time.Millisecond
	// saveRetry is how long a failed save waits before it tries again.
	saveRetry = 5 * time.Second
)

// stateFile is the JSON of the state file:
//
//	{"version": 2, "threads": [thread, …]}
//
// Threads are listed newest first, each as
//
//	{"id", "title", "created", "order", "activity", "active", "agent", "session", "messages": [message, …]}
//
// or, for a cold thread, with "cold": true and no messages: they are in
// the thread's own file (coldFile) in the directory coldDirFor names;
//
// where order and activity are counters giving the creation order (the list
// order) and the order of the last activity (the least recently active
// thread is forgotten first), and messages are the API's message objects,
// oldest first, including the options of unanswered prompts and tool
// lines' details (each text cut to maxSavedDetail bytes); session is the
// session line as last shown. Typing state is not saved. Unknown fields
// are ignored.
type stateFile struct {
	Version int           `json:"version"`
	Threads []savedThread `json:"threads"`
}

// savedThread is one thread of the state file. Messages holds the encoded
// message list, so that the encoding of an unchanged thread is reused.
type savedThread struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Created  time.Time `json:"created"`
	Order    uint64    `json:"order"`
	Activity uint64    `json:"activity"`
	// Active is the time of the last activity (since version 2).
	Active   time.Time       `json:"active,omitzero"`
	Agent    string          `json:"agent,omitempty"`
	Session  *sessionView    `json:"session,omitempty"`
	Cold     bool            `json:"cold,omitempty"`
	Messages json.RawMessage `json:"messages,omitempty"`
}

// newerVersionError reports a state file written by a newer gateway.
type newerVersionError struct{ version int }

func (e *newerVersionError) Error() string {
	return fmt.Sprintf("state file version %d is newer than this gateway reads (%d)", e.version, stateVersion)
}

// decodeState reads a state file. It returns a *newerVersionError for a
// file of a newer version, and another error when the file is not a valid
// state file of version 1 or 2: not JSON, no version, an invalid or repeated
// thread or message id, an unknown role, a missing kind, a negative edit
// count, or a prompt option without an id or with a repeated one. It does
// not apply the memory bounds (store.restore does).
func decodeState(data []byte) ([]*thread, error) {
	// The version first: a newer format need not parse as this one.
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("reading the version: %w", err)
	}
	switch {
	case head.Version == nil:
		return nil, errors.New("no version field")
	case *head.Version > stateVersion:
		return nil, &newerVersionError{version: *head.Version}
	case *head.Version < 1:
		return nil, fmt.Errorf("invalid version %d", *head.Version)
	}
	var f stateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	ts := make([]*thread, 0, len(f.Threads))
	seen := make(map[string]bool, len(f.Threads))
	for i, st := range f.Threads {
		if !validID(st.ID) {
			return nil, fmt.Errorf("thread %d: invalid id %q", i, st.ID)
		}
		if seen[st.ID] {
			return nil, fmt.Errorf("thread %d: repeated id %q", i, st.ID)
		}
		seen[st.ID] = true
		var msgs []message
		if len(st.Messages) > 0 {
			if err := json.Unmarshal(st.Messages, &msgs); err != nil {
				return nil, fmt.Errorf("thread %s: messages: %w", st.ID, err)
			}
		}
		t := &thread{
			id:       st.ID,
			title:    titleFrom(st.Title),
			agent:    st.Agent,
			session:  st.Session,
			created:  st.Created,
			seq:      st.Order,
			active:   st.Activity,
			activeAt: st.Active,
			msgs:     make([]*message, 0, len(msgs)),
			byID:     make(map[string]*message, len(msgs)),
			subs:     make(map[*subscriber]struct{}),
		}
		if st.Cold {
			if len(msgs) > 0 {
				return nil, fmt.Errorf("thread %s: cold, with messages", st.ID)
			}
			t.cold, t.onDisk, t.msgs, t.byID = true, true, nil, nil
		}
		for j := range msgs {
			m := &msgs[j]
			if err := checkSaved(m); err != nil {
				return nil, fmt.Errorf("thread %s: message %d: %w", st.ID, j, err)
			}
			m.HTML = renderFor(m.Role, m.Text)
			m.Card = cardFor(m.Kind, m.Text)
			if t.byID[m.ID] != nil {
				return nil, fmt.Errorf("thread %s: message %d: repeated id %q", st.ID, j, m.ID)
			}
			t.msgs = append(t.msgs, m)
			t.byID[m.ID] = m
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// checkSaved checks a message read from the state file.
func checkSaved(m *message) error {
	switch {
	case !validID(m.ID):
		return fmt.Errorf("invalid id %q", m.ID)
	case m.Role != roleUser && m.Role != roleAssistant && m.Role != roleSystem:
		return fmt.Errorf("unknown role %q", m.Role)
	case m.Kind == "":
		return errors.New("no kind")
	case m.Edits < 0:
		return fmt.Errorf("negative edit count %d", m.Edits)
	}
	for _, f := range m.Files {
		if !validThumb(f.Thumb) {
			return fmt.Errorf("file %q: a preview that is not a JPEG or PNG data: URL", f.Name)
		}
		if f.URL != "" && !validFileURL(f.URL) {
			return fmt.Errorf("file %q: a link %q that is not one of the chat's files", f.Name, f.URL)
		}
	}
	seen := make(map[string]bool, len(m.Options))
	for _, o := range m.Options {
		if o.ID == "" || seen[o.ID] {
			return fmt.Errorf("option id %q empty or repeated", o.ID)
		}
		seen[o.ID] = true
	}
	if len(m.Options) == 0 {
		m.Options = nil // "options": [] means none
	}
	return nil
}

// validID reports whether s can be a thread or message id: 1 to 64
// letters, digits, '-' and '_' (the ids this package makes are 12 hex
// digits), so that it is safe in a URL path.
func validID(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// persister keeps the store in the state file (and the cold threads'
// files beside it, cold.go): it loads it once, and
// saves after changes, debounced, from a goroutine that Adapter.Run owns.
// The store only pokes it, so no change waits for the disk.
type persister struct {
	path     string
	st       *store
	log      *slog.Logger
	interval time.Duration // debounce of saves
	retry    time.Duration // wait after a failed save
	poke     chan struct{} // buffered 1: the store changed since the saver last looked

	mu    sync.Mutex // guards the fields below; held for a whole save, so saves never overlap
	saved uint64     // store.rev of the last save
	cache map[string]encodedThread
}

// encodedThread is the message list of a thread as last encoded.
type encodedThread struct {
	rev  uint64 // thread.rev it was encoded at
	msgs []byte // the JSON array
	// at is where each message's JSON is in msgs. Stored messages never
	// change (an edit stores a new one), so a message found here needs no
	// encoding again.
	at map[*message][2]int
}

// encodeMessages encodes ms as a JSON array, reusing the encodings of old
// for the messages it has.
func encodeMessages(rev uint64, ms []*message, old encodedThread) encodedThread {
	enc := encodedThread{rev: rev, at: make(map[*message][2]int, len(ms))}
	b := append(make([]byte, 0, len(old.msgs)+4096), '[')
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		start := len(b)
		if o, ok := old.at[m]; ok {
			b = append(b, old.msgs[o[0]:o[1]]...)
		} else {
			saved := *m
			saved.HTML, saved.Card = "", nil // derived from the text: rendered again on loading
			saved.Tool = savedDetail(m.Tool)
			b = append(b, mustJSON(&saved)...)
		}
		enc.at[m] = [2]int{start, len(b)}
	}
	enc.msgs = append(b, ']')
	return enc
}

// maxSavedDetail bounds each text of a tool line's details in the state
// file (an input, an output, a diff's sides): the details of a long
// output are tens of KiB, kept whole in memory only.
const maxSavedDetail = 4 << 10

// savedDetail is d as the state file keeps it: each text cut to
// maxSavedDetail bytes, said at its end.
func savedDetail(d *toolDetail) *toolDetail {
	if d == nil {
		return nil
	}
	out := &toolDetail{Input: cutDetail(d.Input), Output: cutDetail(d.Output), Locations: d.Locations}
	for _, df := range d.Diffs {
		out.Diffs = append(out.Diffs, toolDiff{Path: df.Path, Old: cutDetail(df.Old), New: cutDetail(df.New)})
	}
	return out
}

func cutDetail(s string) string {
	if len(s) <= maxSavedDetail {
		return s
	}
	cut := maxSavedDetail
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n… (%d more bytes, not kept after a restart)", len(s)-cut)
}

func newPersister(path string, st *store, log *slog.Logger) *persister {
	return &persister{
		path:     path,
		st:       st,
		log:      log,
		interval: saveInterval,
		retry:    saveRetry,
		poke:     make(chan struct{}, 1),
	}
}

// changed is the store's change hook: it pokes the saver without
// blocking.
func (p *persister) changed() {
	select {
	case p.poke <- struct{}{}:
	default:
	}
}

// load reads the state file into the (empty) store and logs the outcome.
// A missing file is an empty state; a corrupt one is moved aside to
// path+".corrupt". It returns false when saving must stay off for this
// run, so that a file it could not read (unreadable, or of a newer
// version) is not overwritten.
func (p *persister) load() bool {
	// Threads past the memory bound go cold, to disk, from now on;
	// unless saving stays off.
	p.st.coldDir = coldDirFor(p.path)
	ok := p.read()
	if !ok {
		p.st.coldDir = ""
	}
	return ok
}

func (p *persister) read() bool {
	data, err := os.ReadFile(p.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.log.Debug("web chat: no state file yet; starting with no threads", "path", p.path)
		return true
	case err != nil:
		p.log.Error("web chat: cannot read the state file; starting with no threads and not saving them this run", "path", p.path, "err", err)
		return false
	}
	ts, err := decodeState(data)
	var newer *newerVersionError
	switch {
	case errors.As(err, &newer):
		p.log.Error("web chat: the state file was written by a newer gateway; starting with no threads, leaving the file as it is and not saving this run's threads",
			"path", p.path, "version", newer.version, "supported", stateVersion)
		return false
	case err != nil:
		aside := p.path + ".corrupt"
		if rerr := os.Rename(p.path, aside); rerr != nil {
			p.log.Error("web chat: the state file is corrupt and cannot be moved aside; starting with no threads and not saving them this run",
				"path", p.path, "err", err, "renameErr", rerr)
			return false
		}
		p.log.Error("web chat: the state file is corrupt; moved it aside and starting with no threads", "path", p.path, "movedTo", aside, "err", err)
		return true
	}
	cold, lostMsgs := p.st.restore(ts)
	p.log.Info("web chat: restored threads from the state file", "path", p.path, "threads", len(ts),
		"onDisk", cold, "overBoundsMessages", lostMsgs)
	return true
}

// run saves the state after changes until stop is closed, then saves once
// more. A save happens one interval after the first change that follows
// the previous save, so saves are at least an interval apart; a failed
// save is logged and tried again after p.retry.
func (p *persister) run(stop <-chan struct{}) {
	var timer *time.Timer
	var fire <-chan time.Time
	arm := func(d time.Duration) {
		if fire == nil {
			timer = time.NewTimer(d)
			fire = timer.C
		}
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	if p.dirty() {
		arm(p.interval)
	}
	failing := false
	for {
		select {
		case <-stop:
			if err := p.flush(); err != nil {
				p.log.Error("web chat: cannot save the threads at shutdown", "path", p.path, "err", err)
			}
			return
		case <-p.poke:
			arm(p.interval)
		case <-fire:
			fire = nil
			err := p.flush()
			switch {
			case err != nil && !failing:
				p.log.Error("web chat: cannot save the threads; trying again", "path", p.path, "err", err, "retry", p.retry)
			case err != nil:
				p.log.Debug("web chat: saving the threads failed again", "path", p.path, "err", err)
			case failing:
				p.log.Info("web chat: saving the threads works again", "path", p.path)
			}
			failing = err != nil
			if failing {
				arm(p.retry)
			}
		}
	}
}

// dirty reports whether the store changed since the last save.
func (p *persister) dirty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	return p.st.rev != p.saved
}

// threadSave is a thread as collected for a save. msgs is nil when the
// cached encoding of its messages is current; the messages it points to
// never change (the store replaces a message when it is edited).
type threadSave struct {
	meta savedThread
	rev  uint64
	msgs []*message
}

// coldDir is where the cold threads' files go.
func (p *persister) coldDir() string { return coldDirFor(p.path) }

// flush writes the state file if the store changed since the last save.
// It blocks on disk I/O (the store is locked only to copy what changed)
// and returns the error of writing the file; the state stays due then.
func (p *persister) flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, rev, cold, ok := p.encodeLocked()
	if !ok {
		return nil
	}
	// The cold files first: the state file names them.
	if err := writeCold(p.coldDir(), cold); err != nil {
		return fmt.Errorf("web: saving a thread to disk: %w", err)
	}
	if err := writeFileAtomic(p.path, data); err != nil {
		return fmt.Errorf("web: saving the chat state: %w", err)
	}
	p.saved = rev
	p.st.freeCold(cold)
	// After the state file: it no longer names them.
	if err := removeCold(p.coldDir(), p.st.takeGoneCold()); err != nil {
		p.log.Warn("web chat: cannot remove the file of a deleted thread", "err", err)
	}
	p.log.Debug("web chat: saved the threads", "path", p.path, "bytes", len(data))
	return nil
}

// encodeLocked encodes the store as a state file, reusing the encoding of
// threads that did not change and of messages that did not, and returns
// it with the store.rev it shows; ok is false when nothing changed since
// the last save. The parts are joined as they are (they are JSON this
// package encoded), so a save under streaming encodes only what changed.
// p.mu must be held.
func (p *persister) encodeLocked() (data []byte, rev uint64, cold []coldSave, ok bool) {
	rev, ts, cold, ok := p.collect()
	if !ok {
		return nil, 0, nil, false
	}
	next := make(map[string]encodedThread, len(ts))
	size := 64
	for _, t := range ts {
		if t.meta.Cold {
			size += 256
			continue
		}
		enc := p.cache[t.meta.ID]
		if t.msgs != nil {
			enc = encodeMessages(t.rev, t.msgs, enc)
		}
		next[t.meta.ID] = enc
		size += len(enc.msgs) + 256
	}
	b := fmt.Appendf(make([]byte, 0, size), `{"version":%d,"threads":[`, stateVersion)
	for i, t := range ts {
		enc := next[t.meta.ID]
		if i > 0 {
			b = append(b, ',')
		}
		meta := mustJSON(t.meta) // without messages: omitted when nil
		if t.meta.Cold {
			b = append(b, meta...)
			continue
		}
		b = append(b, meta[:len(meta)-1]...)
		b = append(b, `,"messages":`...)
		b = append(b, enc.msgs...)
		b = append(b, '}')
	}
	p.cache = next
	return append(b, "]}"...), rev, cold, true
}

// collect copies, with the store locked, what a save needs: the threads
// newest first, and the message lists (pointers) of those changed since
// their cached encoding, and the cold threads whose files are due. ok is
// false when nothing changed since the last save.
func (p *persister) collect() (rev uint64, ts []threadSave, cold []coldSave, ok bool) {
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	if p.st.rev == p.saved {
		return 0, nil, nil, false
	}
	ts = make([]threadSave, 0, len(p.st.threads))
	for _, t := range p.st.threads {
		s := threadSave{
			meta: savedThread{ID: t.id, Title: t.title, Created: t.created, Order: t.seq, Activity: t.active, Active: t.activeAt,
				Agent: t.agent, Session: t.session, Cold: t.cold},
			rev: t.rev,
		}
		if t.cold {
			ts = append(ts, s)
			continue
		}
		if c, hit := p.cache[t.id]; !hit || c.rev != t.rev {
			// Only the pointers: encoding reads the messages unlocked.
			s.msgs = append(make([]*message, 0, len(t.msgs)), t.msgs...) // never nil
		}
		ts = append(ts, s)
	}
	slices.SortFunc(ts, func(a, b threadSave) int { return cmp.Compare(b.meta.Order, a.meta.Order) })
	return p.st.rev, ts, p.st.collectColdLocked(), true
}

// writeFileAtomic replaces path with data: it writes a temporary file
// (mode 0600) in the same directory, syncs it and renames it over path, so
// a reader sees the old or the new file, never a part.
func writeFileAtomic(path string, data []byte) (err error) {
	// CreateTemp makes the file with mode 0600.
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}
