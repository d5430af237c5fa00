package store

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/acpgw/gateway/projector"
)

// textKind is the kind of a text entry chunks can be appended to.
type textKind uint8

const (
	notText textKind = iota
	textAssistant
	textThought
	textUser
)

// Transcript builds a session's transcript from its updates (see the package
// documentation for the rules). It does no I/O; entry times come from the
// clock. It is not safe for concurrent use: one owner drives it.
type Transcript struct {
	entries []Entry
	dirty   map[int]struct{} // seqs created or changed since MarkClean

	// text holds the text of the last entry when it is a text entry, up
	// to MaxEntryText bytes; textLen is the whole text's length.
	// entries[last].Body is behind them while stale is set.
	text     strings.Builder
	textLen  int
	textKind textKind
	stale    bool

	// One accumulator per stream, as the projector has.
	assistant, thought, user projector.Accumulator

	tools    map[string]int // tool call id → seq
	perms    map[string]int // permission request id → seq
	lastMeta int            // seq of the latest meta entry, -1 if none
	meta     Meta           // the capabilities known now
}

// NewTranscript returns an empty transcript.
func NewTranscript() *Transcript {
	return &Transcript{
		dirty:    map[int]struct{}{},
		tools:    map[string]int{},
		perms:    map[string]int{},
		lastMeta: -1,
	}
}

// restoreTranscript rebuilds a transcript from saved entries, which must be
// numbered 0, 1, 2, ... in order. The result has nothing dirty.
func restoreTranscript(es []Entry) (*Transcript, error) {
	t := NewTranscript()
	for i, e := range es {
		if e.Seq != i {
			return nil, fmt.Errorf("entry %d missing (found %d)", i, e.Seq)
		}
		switch b := e.Body.(type) {
		case ToolCall:
			t.tools[b.ID] = i
		case PermissionEntry:
			if b.RequestID != "" {
				t.perms[b.RequestID] = i
			}
		case QuestionEntry:
			if b.RequestID != "" {
				t.perms[questionKey(b.RequestID)] = i
			}
		case Meta:
			t.lastMeta = i
			t.meta = b
		case ModeChange:
			t.meta.CurrentMode = b.New
		case nil:
			return nil, fmt.Errorf("entry %d has no body", i)
		}
	}
	t.entries = slices.Clone(es)
	if n := len(es); n > 0 {
		switch b := es[n-1].Body.(type) {
		case Message:
			t.textKind = textAssistant
			if b.Role == RoleUser {
				t.textKind = textUser
			}
			t.text.WriteString(b.Text)
			t.textLen = max(b.Length, len(b.Text))
		case Thought:
			t.textKind = textThought
			t.text.WriteString(b.Text)
			t.textLen = max(b.Length, len(b.Text))
		}
	}
	return t, nil
}

// Apply adds one session/update to the transcript. Updates that the
// transcript does not keep (usage, session info, unknown tags) are ignored;
// the update is only read and may be reused by the caller.
func (t *Transcript) Apply(u projector.Update) {
	switch u.Tag {
	case projector.TagAgentMessageChunk:
		if u.Thought {
			t.chunk(textThought, u.MessageID, u.Text)
		} else {
			t.chunk(textAssistant, u.MessageID, u.Text)
		}
	case projector.TagAgentThoughtChunk:
		t.chunk(textThought, u.MessageID, u.Text)
	case projector.TagUserMessageChunk:
		t.chunk(textUser, u.MessageID, u.Text)
	case projector.TagToolCall, projector.TagToolCallUpdate:
		t.tool(&u.Tool)
	case projector.TagPlan:
		t.add(Plan{Entries: cloneSlice(u.Plan)}, now())
	case projector.TagAvailableCommands:
		t.commands(u.Commands)
	case projector.TagCurrentMode:
		t.mode(u.ModeID)
	case projector.TagConfigOption:
		t.meta.Config = cloneSlice(u.Config)
		t.addMeta()
	}
}

// UserPrompt records the prompt the gateway sent to the agent as a new user
// message at time at (zero: now). It starts a new turn for chunk
// accumulation.
func (t *Transcript) UserPrompt(text string, at time.Time) {
	t.assistant.Reset()
	t.thought.Reset()
	t.user.Reset()
	at = normTime(at)
	if at.IsZero() {
		at = now()
	}
	t.add(Message{Role: RoleUser}, at)
	t.textKind = textUser
	t.appendText(text)
	t.stale = true
}

// Permission records a permission request shown to people. A zero p.Asked
// means now.
func (t *Transcript) Permission(p PermissionEntry) {
	p.Options = cloneSlice(p.Options)
	p.Asked, p.Answered = normTime(p.Asked), normTime(p.Answered)
	if p.Asked.IsZero() {
		p.Asked = now()
	}
	seq := t.add(p, p.Asked)
	if p.RequestID != "" {
		t.perms[p.RequestID] = seq
	}
}

// PermissionAnswered records the answer to permission request requestID:
// the chosen option ("" when cancelled or expired) at time at. The first
// answer wins: it reports false when the request is unknown or was answered
// already.
func (t *Transcript) PermissionAnswered(requestID, optionID string, at time.Time) bool {
	seq, ok := t.perms[requestID]
	if !ok {
		return false
	}
	p := t.entries[seq].Body.(PermissionEntry)
	if !p.Answered.IsZero() {
		return false
	}
	at = normTime(at)
	if at.IsZero() {
		at = now()
	}
	p.Chosen, p.Answered = optionID, at
	t.set(seq, p, at)
	return true
}

// SetMeta records a change of the session's capabilities, as learned from
// session/new, session/load or a set-mode or set-model answer, as a new meta
// entry. Nil slices and empty strings in m keep the values known before; an
// empty, non-nil slice clears them.
func (t *Transcript) SetMeta(m Meta) {
	if m.Modes != nil {
		t.meta.Modes = cloneSlice(m.Modes)
	}
	if m.CurrentMode != "" {
		t.meta.CurrentMode = m.CurrentMode
	}
	if m.Models != nil {
		t.meta.Models = cloneSlice(m.Models)
	}
	if m.CurrentModel != "" {
		t.meta.CurrentModel = m.CurrentModel
	}
	if m.Commands != nil {
		t.meta.Commands = cloneSlice(m.Commands)
	}
	if m.Config != nil {
		t.meta.Config = cloneSlice(m.Config)
	}
	t.addMeta()
}

// Entries returns all entries in order. The slice is the caller's; the
// bodies share slices with the transcript and must not be modified.
func (t *Transcript) Entries() []Entry {
	t.flush()
	return slices.Clone(t.entries)
}

// Len returns the number of entries.
func (t *Transcript) Len() int { return len(t.entries) }

// Dirty returns the entries created or changed since the last MarkClean, in
// order, for Store.SaveEntries.
func (t *Transcript) Dirty() []Entry {
	t.flush()
	seqs := make([]int, 0, len(t.dirty))
	for seq := range t.dirty {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	es := make([]Entry, len(seqs))
	for i, seq := range seqs {
		es[i] = t.entries[seq]
	}
	return es
}

// MarkClean forgets what changed. Call it after the entries Dirty returned
// were saved, before the next change.
func (t *Transcript) MarkClean() { clear(t.dirty) }

// chunk adds a message or thought chunk.
func (t *Transcript) chunk(kind textKind, messageID, text string) {
	acc := &t.assistant
	switch kind {
	case textThought:
		acc = &t.thought
	case textUser:
		acc = &t.user
	}
	same := t.textKind == kind && len(t.entries) > 0
	if kind == textUser && !same {
		// A user message after anything else is a new one, whatever
		// the previous user message's text was.
		t.user.Reset()
	}
	delta, newMessage := acc.Add(messageID, text)
	if delta == "" {
		return
	}
	if same && !newMessage {
		last := len(t.entries) - 1
		t.appendText(delta)
		t.stale = true
		t.entries[last].Updated = now()
		t.dirty[last] = struct{}{}
		return
	}
	var body Body
	switch kind {
	case textAssistant:
		body = Message{Role: RoleAssistant}
	case textThought:
		body = Thought{}
	case textUser:
		// The user speaking starts a turn: agent text that follows is
		// a new reply.
		t.assistant.Reset()
		t.thought.Reset()
		body = Message{Role: RoleUser}
	}
	t.add(body, now())
	t.textKind = kind
	t.appendText(delta)
	t.stale = true
}

// appendText adds s to the last entry's text, keeping at most
// MaxEntryText bytes of it and counting the rest.
func (t *Transcript) appendText(s string) {
	cut := t.textLen > t.text.Len()
	t.textLen += len(s)
	room := MaxEntryText - t.text.Len()
	if cut || room <= 0 {
		return // only the start of the text is kept
	}
	if len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room-- // do not keep half a character
		}
		s = s[:room]
	}
	t.text.WriteString(s)
}

// add appends a new entry with body b, created at time at, and returns its
// seq. The new entry is not a text entry until the caller says so.
func (t *Transcript) add(b Body, at time.Time) int {
	t.flush()
	t.text.Reset()
	t.textLen = 0
	t.textKind = notText
	seq := len(t.entries)
	t.entries = append(t.entries, Entry{Seq: seq, Time: at, Updated: at, Body: b})
	t.dirty[seq] = struct{}{}
	return seq
}

// set replaces the body of entry seq, changed at time at.
// Text entries change through chunk only.
func (t *Transcript) set(seq int, b Body, at time.Time) {
	t.entries[seq].Body = b
	t.entries[seq].Updated = at
	t.dirty[seq] = struct{}{}
}

// flush brings the last text entry's body up to date with t.text.
func (t *Transcript) flush() {
	if !t.stale {
		return
	}
	t.stale = false
	last := len(t.entries) - 1
	switch b := t.entries[last].Body.(type) {
	case Message:
		b.Text, b.Length = t.text.String(), t.cutLength()
		t.entries[last].Body = b
	case Thought:
		b.Text, b.Length = t.text.String(), t.cutLength()
		t.entries[last].Body = b
	}
}

// cutLength is the Length of the last text entry: the whole text's
// length when only its start is kept, else 0.
func (t *Transcript) cutLength() int {
	if t.textLen > t.text.Len() {
		return t.textLen
	}
	return 0
}

// tool upserts a tool call by id.
func (t *Transcript) tool(u *projector.ToolUpdate) {
	if u.ID == "" {
		return
	}
	id := string(u.ID)
	seq, ok := t.tools[id]
	if !ok {
		tc := ToolCall{ID: id}
		mergeTool(&tc, u)
		t.tools[id] = t.add(tc, now())
		return
	}
	tc := t.entries[seq].Body.(ToolCall)
	if mergeTool(&tc, u) {
		t.set(seq, tc, now())
	}
}

// mergeTool applies the fields present in u to tc and reports whether
// anything changed. New slices replace old ones; none is modified in place.
func mergeTool(tc *ToolCall, u *projector.ToolUpdate) bool {
	changed := false
	if u.HasTitle && u.Title != tc.Title {
		tc.Title, changed = u.Title, true
	}
	if u.Kind != "" && u.Kind != tc.Kind {
		tc.Kind, changed = u.Kind, true
	}
	if u.Status != projector.StatusNone && !tc.Status.Terminal() && u.Status > tc.Status {
		tc.Status, changed = u.Status, true
	}
	if len(u.RawInput) > 0 && !bytes.Equal(u.RawInput, tc.Input) {
		tc.Input, changed = bytes.Clone(u.RawInput), true
	}
	if len(u.RawOutput) > 0 && !bytes.Equal(u.RawOutput, tc.Output) {
		tc.Output, changed = bytes.Clone(u.RawOutput), true
	}
	if u.HasContent && !slices.Equal(u.Content, tc.Content) {
		tc.Content, changed = cloneSlice(u.Content), true
	}
	if u.Locations != nil && !slices.Equal(u.Locations, tc.Locations) {
		tc.Locations, changed = cloneSlice(u.Locations), true
	}
	return changed
}

// commands updates the latest meta entry in place, or adds one.
func (t *Transcript) commands(cs []projector.Command) {
	if t.lastMeta >= 0 && slices.Equal(cs, t.meta.Commands) {
		return
	}
	t.meta.Commands = cloneSlice(cs)
	if t.lastMeta < 0 {
		t.addMeta()
		return
	}
	m := t.entries[t.lastMeta].Body.(Meta)
	m.Commands = t.meta.Commands
	t.set(t.lastMeta, m, now())
}

// mode records a switch to mode id.
func (t *Transcript) mode(id string) {
	if id == "" || id == t.meta.CurrentMode {
		return
	}
	prev := t.meta.CurrentMode
	t.meta.CurrentMode = id
	t.add(ModeChange{Previous: prev, New: id}, now())
}

// addMeta adds a meta entry with the capabilities known now. t.meta's
// slices are replaced on change, never modified, so the entry can share
// them.
func (t *Transcript) addMeta() {
	t.lastMeta = t.add(t.meta, now())
}

// cloneSlice copies s; an empty s gives nil, as a saved and loaded entry
// has.
func cloneSlice[S ~[]E, E any](s S) S {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}
