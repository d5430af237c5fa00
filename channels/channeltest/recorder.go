package channeltest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/acpgw/gateway/channels"
)

// Options configures a Recorder.
type Options struct {
	// Edit reports channels.Editor.
	Edit bool
	// Typing reports channels.Typer and channels.TypingStopper.
	Typing bool
	// Prompt reports channels.Prompter.
	Prompt bool
	// Upload reports channels.Uploader. Files larger than
	// Limits.MaxUploadBytes are rejected.
	Upload bool
	// Form reports channels.Former; AnswerForm answers its forms.
	Form bool
	// Limits is what the adapter's Limits method reports. Texts longer
	// than Limits.MaxMessageChars code points are rejected.
	Limits channels.Limits
	// Platform is the ThreadRef.Platform the adapter serves; "" means
	// "test". Calls for threads of another platform fail.
	Platform string
	// React reports channels.Reactor (ops "react" and "unreact").
	React bool
}

// The operation names Recorder.Inject accepts.
const (
	InjectPost       = "post"
	InjectEdit       = "edit"
	InjectTyping     = "typing"
	InjectStopTyping = "stop_typing"
	InjectPrompt     = "prompt"
	InjectUpload     = "upload"
	InjectForm       = "form"
)

var injectable = []string{InjectPost, InjectEdit, InjectTyping, InjectStopTyping, InjectPrompt, InjectUpload, InjectReact, InjectForm}

// Recorder is a fake chat platform and the adapter for it. It records every
// call and keeps the current state of every message. It is safe for
// concurrent use. The zero value is not usable; call New.
type Recorder struct {
	opts  Options
	inbox chan delivery // unbuffered: Deliver hands over to a running Run

	mu       sync.Mutex    // guards the fields below
	caps     channels.Caps // what the adapter reports (Options, SetCaps)
	attempts []record
	msgs     []*Message // in post order
	byID     map[channels.MessageID]*Message
	lastID   int
	injected map[string][]error // by operation name, in injection order
	typing   map[channels.ThreadRef]bool
	// reactions are the app's reactions by message id (react.go).
	reactions map[channels.MessageID][]string
	changed   chan struct{} // closed and replaced on every logged call
}

// record is one entry of the call log.
type record struct {
	thread channels.ThreadRef
	op     Op
	ok     bool
}

// delivery is an inbound message on its way to Run's handler; done is
// closed when the handler returned.
type delivery struct {
	in   channels.Inbound
	done chan struct{}
}

// New returns a Recorder with the capabilities and limits of o.
func New(o Options) *Recorder {
	if o.Platform == "" {
		o.Platform = "test"
	}
	r := &Recorder{
		opts:     o,
		inbox:    make(chan delivery),
		byID:     make(map[channels.MessageID]*Message),
		injected: make(map[string][]error),
		typing:   make(map[channels.ThreadRef]bool),
		changed:  make(chan struct{}),
		caps:     capsOf(o),
	}
	return r
}

// Adapter returns the adapter view of r. It implements channels.Adapter
// and the capability interfaces the recorder fakes (channels.Editor,
// channels.Typer, channels.TypingStopper, channels.Prompter,
// channels.Uploader, channels.Former, channels.Reactor), and reports
// (channels.CapsReporter) those enabled in Options, or by SetCaps since:
// channels.As finds exactly those, Typer and TypingStopper together. A
// call of one it does not report fails with a *channels.PermanentError.
// It returns the same value on every call.
func (r *Recorder) Adapter() channels.Adapter { return view{r} }

// Thread returns a ThreadRef of r's platform in channel "c" with thread id
// name.
func (r *Recorder) Thread(name string) channels.ThreadRef {
	return channels.ThreadRef{Platform: r.opts.Platform, Channel: "c", Thread: name}
}

// Ops returns the successful operations so far, and the notes, in call order.
func (r *Recorder) Ops() []Op {
	return r.ops(func(rec record) bool { return rec.ok })
}

// OpsIn returns the successful operations in thread t, in call order. Notes
// carry no thread and are not included.
func (r *Recorder) OpsIn(t channels.ThreadRef) []Op {
	return r.ops(func(rec record) bool { return rec.ok && rec.thread == t })
}

// Attempts returns every call including failed ones, whose Op carries the
// error text, and the notes, in call order.
func (r *Recorder) Attempts() []Op {
	return r.ops(func(record) bool { return true })
}

func (r *Recorder) ops(keep func(record) bool) []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Op
	for _, rec := range r.attempts {
		if keep(rec) {
			out = append(out, rec.op.clone())
		}
	}
	return out
}

// Note appends op to the log (both Ops and Attempts) without an adapter
// call; the replay tool adds {"op":"turn_end"} this way.
func (r *Recorder) Note(op Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logLocked(channels.ThreadRef{}, op.clone(), nil)
}

// NoteIn is Note for a note that belongs to thread t: OpsIn(t) and
// WaitFor(t) include it.
func (r *Recorder) NoteIn(t channels.ThreadRef, op Op) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logLocked(t, op.clone(), nil)
}

// Messages returns the current state of every posted message (prompts
// included), in post order.
func (r *Recorder) Messages() []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Message, 0, len(r.msgs))
	for _, m := range r.msgs {
		out = append(out, m.clone())
	}
	return out
}

// Message returns the current state of message id.
func (r *Recorder) Message(id channels.MessageID) (Message, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m, ok := r.byID[id]
	if !ok {
		return Message{}, false
	}
	return m.clone(), true
}

// TypingShown reports whether the typing indicator in t is on: Typing was
// called and StopTyping was not called since. It never fades.
func (r *Recorder) TypingShown(t channels.ThreadRef) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.typing[t]
}

// Inject makes the next call of the named operation (InjectPost, InjectEdit,
// InjectTyping, InjectStopTyping or InjectPrompt) return err unchanged
// instead of doing anything. Several injections queue up in order. A call
// whose context is already done fails with the context's error and leaves
// the queue alone. Inject panics on an unknown operation name or a nil err.
func (r *Recorder) Inject(op string, err error) {
	if !slices.Contains(injectable, op) {
		panic(fmt.Sprintf("channeltest: Inject: unknown operation %q, want one of %q", op, injectable))
	}
	if err == nil {
		panic("channeltest: Inject: nil error")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.injected[op] = append(r.injected[op], err)
}

// Deliver hands in to the handler of a running Run, as if a person wrote it.
// It blocks until a Run takes it and its handler returned, or until ctx
// ends; then it returns an error wrapping the context's cause.
func (r *Recorder) Deliver(ctx context.Context, in channels.Inbound) error {
	d := delivery{in: in, done: make(chan struct{})}
	select {
	case r.inbox <- d:
	case <-ctx.Done():
		return fmt.Errorf("deliver: no running Run took the message: %w", context.Cause(ctx))
	}
	select {
	case <-d.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("deliver: handler did not return: %w", context.Cause(ctx))
	}
}

// Click delivers author's click on option optionID of prompt h through Deliver,
// as Inbound.Choice. It fails without delivering when h is not a prompt in
// h.Thread or the prompt has no such option, as a real platform would show no
// such button.
func (r *Recorder) Click(ctx context.Context, author channels.Author, h channels.Handle, optionID string) error {
	m, ok := r.Message(h.ID)
	if !ok || m.Thread != h.Thread || m.Options == nil {
		return fmt.Errorf("click %s: no prompt %q in %s", optionID, h.ID, h.Thread)
	}
	if !slices.Contains(m.Options, optionID) {
		return fmt.Errorf("click %s: prompt %s has options %q", optionID, h.ID, m.Options)
	}
	return r.Deliver(ctx, channels.Inbound{
		Thread: h.Thread,
		Author: author,
		Choice: &channels.ChoiceAnswer{Prompt: h, OptionID: optionID},
		Reply:  r.ReplyFunc(h.Thread),
	})
}

// ReplyFunc returns an Inbound.Reply for thread t that records a private
// answer as a "reply" op of t (it is no message in the thread).
func (r *Recorder) ReplyFunc(t channels.ThreadRef) func(context.Context, string) error {
	return func(ctx context.Context, text string) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		op := Op{Op: "reply", Text: text}
		if err := ctx.Err(); err != nil {
			r.logLocked(t, op, err)
			return err
		}
		r.logLocked(t, op, nil)
		return nil
	}
}

// run implements channels.Adapter.Run.
func (r *Recorder) run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case d := <-r.inbox:
			h(ctx, d.in)
			close(d.done)
		}
	}
}

// post implements channels.Adapter.Post.
func (r *Recorder) post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := Op{Op: "send", Kind: m.Kind, Key: m.Key, Text: m.Text}
	err := r.checkLocked(ctx, InjectPost, t)
	if err == nil {
		err = r.checkMessage(m)
		if err != nil {
			err = channels.Permanent(fmt.Errorf("channeltest: post in %s: %w", t, err))
		}
	}
	if err != nil {
		r.logLocked(t, op, err)
		return channels.Handle{}, err
	}
	msg := r.addLocked(t, m.Kind, m.Key, m.Text, nil)
	op.Msg = msg.ID
	r.logLocked(t, op, nil)
	return channels.Handle{Thread: t, ID: msg.ID}, nil
}

// edit implements channels.Editor.
func (r *Recorder) edit(ctx context.Context, h channels.Handle, m channels.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := Op{Op: "edit", Msg: h.ID, Kind: m.Kind, Key: m.Key, Text: m.Text}
	err := r.checkLocked(ctx, InjectEdit, h.Thread)
	var msg *Message
	if err == nil {
		var ok bool
		msg, ok = r.byID[h.ID]
		if !ok || msg.Thread != h.Thread {
			err = fmt.Errorf("channeltest: edit %q in %s: %w", h.ID, h.Thread, channels.ErrMessageGone)
		} else if err = r.checkMessage(m); err != nil {
			err = channels.Permanent(fmt.Errorf("channeltest: edit %q in %s: %w", h.ID, h.Thread, err))
		}
	}
	if err != nil {
		r.logLocked(h.Thread, op, err)
		return err
	}
	msg.Kind, msg.Key, msg.Text = m.Kind, m.Key, m.Text
	msg.Options = nil // an edited prompt has no buttons any more
	msg.Edits++
	r.logLocked(h.Thread, op, nil)
	return nil
}

// startTyping implements channels.Typer.
func (r *Recorder) startTyping(ctx context.Context, t channels.ThreadRef) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := Op{Op: "typing", State: "start"}
	if r.typing[t] {
		op.State = "refresh"
	}
	if err := r.checkLocked(ctx, InjectTyping, t); err != nil {
		r.logLocked(t, op, err)
		return err
	}
	r.typing[t] = true
	r.logLocked(t, op, nil)
	return nil
}

// stopTyping implements channels.TypingStopper.
func (r *Recorder) stopTyping(ctx context.Context, t channels.ThreadRef) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := Op{Op: "typing", State: "stop"}
	if err := r.checkLocked(ctx, InjectStopTyping, t); err != nil {
		r.logLocked(t, op, err)
		return err
	}
	delete(r.typing, t)
	r.logLocked(t, op, nil)
	return nil
}

// prompt implements channels.Prompter.
func (r *Recorder) prompt(ctx context.Context, t channels.ThreadRef, c channels.Choice) (channels.Handle, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]string, 0, len(c.Options))
	for _, o := range c.Options {
		ids = append(ids, o.ID)
	}
	op := Op{Op: "prompt", Kind: channels.KindPermission, Text: c.Text, Options: ids, Attachment: c.Attachment}
	err := r.checkLocked(ctx, InjectPrompt, t)
	if err == nil {
		err = r.checkChoice(c)
		if err != nil {
			err = channels.Permanent(fmt.Errorf("channeltest: prompt in %s: %w", t, err))
		}
	}
	if err != nil {
		r.logLocked(t, op, err)
		return channels.Handle{}, err
	}
	msg := r.addLocked(t, channels.KindPermission, "", c.Text, ids)
	msg.Attachment = c.Attachment
	op.Msg = msg.ID
	r.logLocked(t, op, nil)
	return channels.Handle{Thread: t, ID: msg.ID}, nil
}

// upload implements channels.Uploader. The file becomes a message of kind
// channels.KindFile whose Text is the caption.
func (r *Recorder) upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := Op{Op: "upload", Kind: channels.KindFile, Text: f.Caption, File: f.Name, ContentType: f.Type(), Bytes: len(f.Data)}
	err := r.checkLocked(ctx, InjectUpload, t)
	if err == nil {
		err = r.checkUpload(f)
		if err != nil {
			err = channels.Permanent(fmt.Errorf("channeltest: upload in %s: %w", t, err))
		}
	}
	if err != nil {
		r.logLocked(t, op, err)
		return channels.Handle{}, err
	}
	msg := r.addLocked(t, channels.KindFile, "", f.Caption, nil)
	f.Data = slices.Clone(f.Data)
	msg.File = &f
	op.Msg = msg.ID
	r.logLocked(t, op, nil)
	return channels.Handle{Thread: t, ID: msg.ID}, nil
}

// checkUpload rejects what a real platform would reject.
func (r *Recorder) checkUpload(f channels.Upload) error {
	if f.Name == "" {
		return errors.New("file without a name")
	}
	if limit := r.opts.Limits.MaxUploadBytes; len(f.Data) > limit {
		return fmt.Errorf("file of %d bytes, limit is %d", len(f.Data), limit)
	}
	if f.Caption != "" {
		return r.checkText(f.Caption)
	}
	return nil
}

// checkLocked decides whether call name in t fails before it does anything:
// because ctx is done, because the adapter does not report the call's
// capability, because an error was injected, or because t belongs to
// another platform.
func (r *Recorder) checkLocked(ctx context.Context, name string, t channels.ThreadRef) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("channeltest: %s in %s: %w", name, t, err)
	}
	if err := r.offLocked(name, t); err != nil {
		return err
	}
	if q := r.injected[name]; len(q) > 0 {
		err := q[0]
		r.injected[name] = q[1:]
		return err
	}
	if t.Platform != r.opts.Platform {
		return channels.Permanent(fmt.Errorf("channeltest: %s in %s: thread of platform %q, adapter serves %q", name, t, t.Platform, r.opts.Platform))
	}
	return nil
}

var kinds = []channels.Kind{
	channels.KindText, channels.KindTool, channels.KindStatus, channels.KindNotice,
	channels.KindPlan, channels.KindThought, channels.KindPermission,
}

// checkMessage rejects what a real platform would reject, and unknown kinds.
func (r *Recorder) checkMessage(m channels.Message) error {
	if !slices.Contains(kinds, m.Kind) {
		return fmt.Errorf("unknown kind %q", m.Kind)
	}
	return r.checkText(m.Text)
}

func (r *Recorder) checkChoice(c channels.Choice) error {
	if err := r.checkText(c.Text); err != nil {
		return err
	}
	if len(c.Options) == 0 {
		return errors.New("no options")
	}
	if a := c.Attachment; a != nil {
		if limit := r.opts.Limits.MaxAttachmentBytes; len(a.Text) > limit {
			return fmt.Errorf("attachment of %d bytes, limit is %d", len(a.Text), limit)
		}
		if a.Name == "" || !utf8.ValidString(a.Text) {
			return errors.New("attachment without a name or not UTF-8")
		}
	}
	seen := make(map[string]bool, len(c.Options))
	for _, o := range c.Options {
		if o.ID == "" {
			return errors.New("option with empty id")
		}
		if seen[o.ID] {
			return fmt.Errorf("duplicate option id %q", o.ID)
		}
		seen[o.ID] = true
	}
	return nil
}

func (r *Recorder) checkText(s string) error {
	switch n, limit := utf8.RuneCountInString(s), r.opts.Limits.MaxMessageChars; {
	case s == "":
		return errors.New("text is empty")
	case !utf8.ValidString(s):
		return errors.New("text is not valid UTF-8")
	case limit > 0 && n > limit:
		return fmt.Errorf("text has %d code points, limit is %d", n, limit)
	}
	return nil
}

func (r *Recorder) addLocked(t channels.ThreadRef, kind channels.Kind, key, text string, options []string) *Message {
	r.lastID++
	m := &Message{
		ID:      channels.MessageID("m" + strconv.Itoa(r.lastID)),
		Thread:  t,
		Kind:    kind,
		Key:     key,
		Text:    text,
		Options: options,
	}
	r.msgs = append(r.msgs, m)
	r.byID[m.ID] = m
	return m
}

func (r *Recorder) logLocked(t channels.ThreadRef, op Op, err error) {
	if err != nil {
		op.Error = err.Error()
	}
	r.attempts = append(r.attempts, record{thread: t, op: op, ok: err == nil})
	close(r.changed)
	r.changed = make(chan struct{})
}

// WaitFor blocks until ok holds for the successful operations in thread t
// (as OpsIn returns them), checking after every call the recorder logs. It
// returns an error wrapping the context's cause, with the operations seen,
// when ctx ends first.
func (r *Recorder) WaitFor(ctx context.Context, t channels.ThreadRef, ok func([]Op) bool) error {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		ops := r.OpsIn(t)
		if ok(ops) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("channeltest: waiting in %s: %w; ops so far: %v", t, context.Cause(ctx), ops)
		}
	}
}
