package demoagent

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Session ids are "demo-" and 12 lowercase hex digits. Only such ids name
// files, so an id from the wire can never point outside the state dir.
const (
	sessionIDPrefix = "demo-"
	sessionIDHex    = 12
)

// recordVersion is the version of the session file format.
const recordVersion = 1

// Roles of history messages.
const (
	roleUser  = "user"
	roleAgent = "agent"
)

// record is one session as stored on disk.
type record struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Cwd     string `json:"cwd"`
	Mode    string `json:"mode"`
	// Model and Effort are config options; "" is the default value.
	Model  string `json:"model,omitempty"`
	Effort string `json:"effort,omitempty"`
	// Fast is the boolean config option fast (ACP 1.33).
	Fast    bool      `json:"fast,omitempty"`
	Title   string    `json:"title,omitempty"`
	History []message `json:"history"`
}

// message is one entry of a session's history: a user prompt or the
// agent's full reply to it.
type message struct {
	Role string `json:"role"`
	Text string `json:"text"`
}

// errNoSession reports that no file exists for a session id.
var errNoSession = errors.New("no such session")

// store keeps session records as files in one directory.
type store struct{ dir string }

func (s store) path(id string) string { return filepath.Join(s.dir, id+".json") }

// save writes r atomically (a temporary file renamed over the old one).
func (s store) save(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode session %s: %w", r.ID, err)
	}
	f, err := os.CreateTemp(s.dir, r.ID+".*.tmp")
	if err != nil {
		return fmt.Errorf("save session %s: %w", r.ID, err)
	}
	_, werr := f.Write(b)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("save session %s: %w", r.ID, err)
	}
	if err := os.Rename(f.Name(), s.path(r.ID)); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("save session %s: %w", r.ID, err)
	}
	return nil
}

// load reads the record of session id. It returns an error wrapping
// errNoSession when id is not a demo session id or has no file.
func (s store) load(id string) (record, error) {
	if !validSessionID(id) {
		return record{}, fmt.Errorf("load session %q: %w", id, errNoSession)
	}
	b, err := os.ReadFile(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return record{}, fmt.Errorf("load session %s: %w", id, errNoSession)
	}
	if err != nil {
		return record{}, fmt.Errorf("load session %s: %w", id, err)
	}
	r, err := decodeRecord(b)
	if err != nil {
		return record{}, fmt.Errorf("load session %s: %w", id, err)
	}
	if r.ID != id {
		return record{}, fmt.Errorf("load session %s: file holds session %s", id, r.ID)
	}
	return r, nil
}

// decodeRecord parses and checks a session file.
func decodeRecord(b []byte) (record, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return record{}, fmt.Errorf("decode session file: %w", err)
	}
	if r.Version != recordVersion {
		return record{}, fmt.Errorf("decode session file: version %d, want %d", r.Version, recordVersion)
	}
	if !validSessionID(r.ID) {
		return record{}, fmt.Errorf("decode session file: bad id %q", r.ID)
	}
	if !validMode(r.Mode) {
		return record{}, fmt.Errorf("decode session file: unknown mode %q", r.Mode)
	}
	if r.Model != "" && !validValue(optModel, r.Model) && !geminiModel(r.Model) {
		return record{}, fmt.Errorf("decode session file: unknown model %q", r.Model)
	}
	if r.Effort != "" && !validValue(optEffort, r.Effort) {
		return record{}, fmt.Errorf("decode session file: unknown effort %q", r.Effort)
	}
	for i, m := range r.History {
		if m.Role != roleUser && m.Role != roleAgent {
			return record{}, fmt.Errorf("decode session file: history[%d]: unknown role %q", i, m.Role)
		}
	}
	return r, nil
}

// validSessionID reports whether id has the form this agent hands out.
func validSessionID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, sessionIDPrefix)
	if !ok || len(hexPart) != sessionIDHex {
		return false
	}
	for _, c := range []byte(hexPart) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// newSessionID returns a fresh random session id.
func newSessionID() string {
	b := make([]byte, sessionIDHex/2)
	rand.Read(b) // never fails (crypto/rand)
	return sessionIDPrefix + hex.EncodeToString(b)
}

// remove deletes the file of session id. It returns an error wrapping
// errNoSession when id is not a demo session id or has no file.
func (s store) remove(id string) error {
	if !validSessionID(id) {
		return fmt.Errorf("delete session %q: %w", id, errNoSession)
	}
	err := os.Remove(s.path(id))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete session %s: %w", id, errNoSession)
	}
	if err != nil {
		return fmt.Errorf("delete session %s: %w", id, err)
	}
	return nil
}
