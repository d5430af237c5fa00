package web

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Threads in memory and on disk. The chat has no bound on how many
// threads it keeps; it bounds how many keep their messages in memory
// (store.maxInMemory). Past that bound, the least recently active thread
// that is not running goes cold: its entry stays in the list (a few
// hundred bytes), its messages and tool details move to a file of their
// own beside the state file and leave memory once written. Any use of a
// cold thread (opening it, a message, an edit) reads it back first, and
// another goes cold in its place. Without a state file there is no disk:
// the thread is forgotten instead, as before this bound existed.

// defaultMaxThreadsInMemory is how many threads keep their messages in
// memory when the setting is not given.
const defaultMaxThreadsInMemory = 200

// coldFile is the JSON of a cold thread's file: what the thread keeps in
// memory besides its list entry. The messages are the API's message
// objects, html and card included, so that reading a thread back
// renders nothing.
type coldFile struct {
	Messages  []*message             `json:"messages"`
	Tools     map[string]*toolDetail `json:"tools,omitempty"`
	ToolOrder []string               `json:"toolOrder,omitempty"`
}

// coldDirFor is the directory of the cold threads' files of the state
// file path: web-chat.json keeps them in web-chat.threads/.
func coldDirFor(path string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ".threads"
}

func coldPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// threadLocked returns thread id, read back from disk first when it is
// cold. It returns errNoThread if there is no such thread, and the error
// of reading its file (the thread stays cold; nothing is lost). The file
// is read and decoded with s.mu released, so that the other threads'
// changes and streams wait for no disk: callers must not rely on what
// they saw of the store before calling it.
func (s *store) threadLocked(id string) (*thread, error) {
	for {
		t := s.threads[id]
		if t == nil {
			return nil, errNoThread
		}
		if !t.cold {
			return t, nil
		}
		if !t.onDisk {
			s.warmLocked(t)
			return t, nil
		}
		saved, path := t.saved, coldPath(s.coldDir, t.id)
		s.mu.Unlock()
		c, err := readCold(s.readFile, path)
		s.mu.Lock()
		if s.threads[id] != t || !t.onDisk || t.saved != saved {
			continue // deleted, read back, or saved again meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("reading thread %s back from disk: %w", t.id, err)
		}
		t.msgs = make([]*message, 0, len(c.Messages))
		t.byID = make(map[string]*message, len(c.Messages))
		for _, m := range c.Messages {
			if m == nil || checkSaved(m) != nil || t.byID[m.ID] != nil {
				continue // a file this package wrote has none
			}
			t.msgs = append(t.msgs, m)
			t.byID[m.ID] = m
		}
		t.tools, t.toolOrder = c.Tools, c.ToolOrder
		t.onDisk = false
		s.warmLocked(t)
		return t, nil
	}
}

// readCold reads and decodes the cold file at path with read.
func readCold(read func(string) ([]byte, error), path string) (coldFile, error) {
	var c coldFile
	data, err := read(path)
	if err != nil {
		return c, err
	}
	err = json.Unmarshal(data, &c)
	return c, err
}

// warmLocked counts cold thread t, its messages in memory again, against
// the bound, and sends another to disk if the bound is passed.
func (s *store) warmLocked(t *thread) {
	t.cold = false
	s.markLocked(t) // the state file holds its messages again
	s.evictLocked(t)
}

// evictLocked sends threads to disk (or, without a state file, forgets
// them) while more than maxInMemory are in memory, never keep nor a
// thread whose turn runs: the least recently active first, those without
// an open page before those with one. When every other thread runs, the
// bound is passed until one ends; a new thread is never refused.
func (s *store) evictLocked(keep *thread) {
	hot := 0
	for _, t := range s.threads {
		if !t.cold {
			hot++
		}
	}
	for ; hot > s.maxInMemory; hot-- {
		var victim *thread
		for _, t := range s.threads {
			if t.cold || t.typing || t == keep {
				continue
			}
			if victim == nil || cmp.Or(cmp.Compare(len(t.subs), len(victim.subs)), cmp.Compare(t.active, victim.active)) < 0 {
				victim = t
			}
		}
		if victim == nil {
			return
		}
		if s.coldDir == "" {
			s.forgetLocked(victim)
			continue
		}
		// The saver writes its file, then drops its messages
		// (freeCold); until then they stay, and a use takes them
		// back at no cost.
		victim.cold = true
		s.markLocked(victim)
	}
}

// forgetLocked removes t, ends its streams and tells the lists.
func (s *store) forgetLocked(t *thread) {
	for sub := range t.subs {
		s.dropLocked(sub)
	}
	s.gone = append(s.gone, keptFiles(t)...)
	if t.onDisk || s.coldDir != "" {
		s.goneCold = append(s.goneCold, t.id)
	}
	delete(s.threads, t.id)
	s.markLocked(nil)
	s.publishRemovedLocked(t.id)
}

// coldSave is a cold thread as collected for writing its file.
type coldSave struct {
	id   string
	rev  uint64
	file coldFile
}

// collectColdLocked returns the cold threads whose messages are still in
// memory, to be written.
func (s *store) collectColdLocked() []coldSave {
	var out []coldSave
	for _, t := range s.threads {
		if !t.cold || t.onDisk {
			continue
		}
		c := coldSave{id: t.id, rev: t.rev, file: coldFile{Messages: append(make([]*message, 0, len(t.msgs)), t.msgs...), ToolOrder: append([]string(nil), t.toolOrder...)}}
		if len(t.tools) > 0 {
			c.file.Tools = make(map[string]*toolDetail, len(t.tools))
			for k, d := range t.tools {
				c.file.Tools[k] = d
			}
		}
		out = append(out, c)
	}
	return out
}

// freeCold drops from memory the messages of the threads written, unless
// one was used (or changed) since.
func (s *store) freeCold(written []coldSave) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range written {
		t := s.threads[c.id]
		if t == nil || !t.cold || t.onDisk || t.rev != c.rev {
			continue
		}
		t.msgs, t.byID, t.tools, t.toolOrder = nil, nil, nil, nil
		t.onDisk = true
		t.saved++
	}
}

// takeGoneCold returns the ids of the threads deleted or forgotten whose
// cold files are to be removed.
func (s *store) takeGoneCold() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.goneCold
	s.goneCold = nil
	return g
}

// writeCold writes the files of the cold threads in cs, in dir (made
// with mode 0700). Stored messages never change, so they are encoded
// without the store locked.
func writeCold(dir string, cs []coldSave) error {
	if len(cs) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, c := range cs {
		if err := writeFileAtomic(coldPath(dir, c.id), mustJSON(&c.file)); err != nil {
			return err
		}
	}
	return nil
}

// removeCold removes the cold files of threads ids; a missing one is not
// an error.
func removeCold(dir string, ids []string) error {
	var errs []error
	for _, id := range ids {
		if err := os.Remove(coldPath(dir, id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
