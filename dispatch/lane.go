// Package dispatch delivers projector outputs into a chat thread: one
// ordered lane per thread, splitting by the channel's limits, editing tool
// and plan messages in place through the handles it keeps (or, where the
// adapter is a channels.Carder with cards on, showing runs of tool calls as
// the rows of progress cards: see card.go), streaming text
// into a draft message or in blocks, pacing by the channel's limits,
// absorbing rate limits, waiting out a platform that cannot be reached
// (Config.RetryFor; what is given up is counted and told), holding a
// final_only turn until it ends, and driving the typing indicator.
//
// A Lane is a synchronous state machine: Push queues outputs, Step performs
// whatever is due at a given time and says when to call again. It never
// reads a clock, so `gateway replay` drives it with virtual time and gets a
// deterministic result. A Dispatcher runs one goroutine per lane with real
// timers for the live gateway.
//
// dispatch decides how things are delivered, never what is visible: that
// is the projector's job.
package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch/split"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
)

// Defaults used when channels.Limits leaves a value at zero.
const (
	DefaultEditInterval = time.Second
	// MaxHold is the longest a text fragment waits in block mode.
	MaxHold = 3 * time.Second
)

// Options configure a Lane.
type Options struct {
	Adapter channels.Adapter
	Thread  channels.ThreadRef
	// Stream is the acp.stream section (deliveryMode, liveText).
	Stream projector.Settings
	Typing typing.Config
	Logger *slog.Logger
	// OnTurnEnd, if set, is called (from Step) when a turn's TurnEnd has
	// been delivered: everything of the turn before it is in the thread.
	OnTurnEnd func(projector.TurnEnd)
	// Observer, if set, is told about deliveries (metrics).
	Observer Observer
	// RetryFor is how long output is kept and tried again while the
	// platform cannot be reached (Config.RetryFor); 0 means
	// DefaultRetryFor.
	RetryFor time.Duration
	// OnPosted, if set, is told (from Step) of each message the lane
	// posted: text, tool lines, notices, prompts.
	OnPosted func(channels.Handle)
	// OnOpen, if set, is told (from Step) the running turn's open
	// messages (see Open) each time they changed, the last time with
	// none once the turn ended. It needs an adapter that edits (without
	// one nothing is ever reported). It owns the slice.
	OnOpen func([]Open)
	// ReadFile, if set, reads the local file an image link of the agent
	// names (projector.Image.Path), refusing what the thread may not
	// show (outside its workspace, say); without it such links are not
	// shown.
	ReadFile func(path string) ([]byte, error)
}

// Observer receives delivery events, from Step. Its methods must be cheap
// and must not block.
type Observer interface {
	// Delivered reports a successful "post", "edit", "prompt" or "upload" of a
	// message of kind; latency is how long the oldest output it shows
	// waited in the lane.
	Delivered(op string, kind channels.Kind, latency time.Duration)
	// RateLimited reports that the platform asked to slow down.
	RateLimited(op string)
}

type nopObserver struct{}

func (nopObserver) Delivered(string, channels.Kind, time.Duration) {}
func (nopObserver) RateLimited(string)                             {}

// Lane delivers the outputs of one thread in order. It is not safe for
// concurrent use: one owner calls Push and Step.
type Lane struct {
	ad       channels.Adapter
	editor   channels.Editor
	typer    channels.Typer
	stopper  channels.TypingStopper
	prompter channels.Prompter
	carder   channels.Carder // nil unless the adapter shows tool calls as cards
	uploader channels.Uploader
	thread   channels.ThreadRef
	limits   channels.Limits
	split    split.Limits
	log      *slog.Logger

	finalOnly bool
	blocks    bool // acp.stream.liveText is blocks
	draftMode bool // stream text into one edited message (blocks off, an Editor)

	queue   []*item
	queued  map[string]*item // keyed items not yet posted
	handles map[string]channels.Handle
	// noticeShown is the text posted of each keyed urgent notice not
	// replaced yet.
	noticeShown map[string]string
	// formKeys are the keys of the prompts that are forms, posted or
	// not: Resolve folds them as notices.
	formKeys map[string]bool
	edits    []*pendingEdit // edits of posted messages, in first-request order
	editFor  map[string]*pendingEdit

	cards   map[string]*card // by key, while the turn lasts
	cardOf  map[string]*card // tool call id → its card
	card    *card            // the card new tool calls join; nil when closed
	cardSeq int

	one   [1]split.Part // splitText's result when the text fits
	seg   segment       // delivery state of the text item at the head of the queue
	carry string        // whitespace of a blank text item, for the next text item

	hold         bool // a final_only turn is in progress: deliver nothing
	blockedUntil time.Time
	// urgent are notices delivered ahead of the ordered queue (Notice).
	urgent []*item

	retryFor    time.Duration
	outageSince time.Time     // first failed attempt of the current outage; zero while reachable
	backoff     time.Duration // the last wait of the current outage
	lost        loss          // given up, and the thread not yet told
	lossItem    *item         // the queued notice of lost, if any

	lastPost time.Time
	lastEdit map[channels.MessageID]time.Time

	typing    *typing.Machine
	typingAct typing.Action // the last typing action not yet performed
	idle      bool
	onTurnEnd func(projector.TurnEnd)
	onPosted  func(channels.Handle)
	obs       Observer

	turnEnd turnEnd // what waits for the turn's end (turnend.go)

	// The running turn's open messages (open.go), with Options.OnOpen.
	onOpen       func([]Open)
	readFile     func(path string) ([]byte, error) // Options.ReadFile
	cuts         map[string]string                 // tool key → cut-off line of its latest state
	opens        []Open
	opensChanged bool
}

type itemKind uint8

const (
	itemPost itemKind = iota
	itemText
	itemThought
	itemTurnEnd
	itemPrompt
	itemFile
)

// item is one entry of the ordered queue.
type item struct {
	kind     itemKind
	msgKind  channels.Kind
	key      string // edit key, "" for plain posts
	text     string
	end      projector.TurnEnd
	choice   channels.Choice              // itemPrompt, fitted to the channel
	posted   func(channels.Handle, error) // itemPrompt
	detail   []string                     // itemPrompt: messages to post before it
	form     *channels.Form               // itemPrompt of a form (Lane.Form)
	upload   *channels.Upload             // itemFile; text is its caption
	fileDone func(error)                  // itemFile: FileThen's done
	buf      strings.Builder              // backs text for text items
	// sealed says no more text joins this item: later text starts a new
	// chat message (projector.Text.NewMessage).
	sealed bool
	// heldSince is when the oldest text not yet released arrived (block
	// mode).
	heldSince time.Time
	// since is when the oldest output this item shows and the platform
	// does not yet arrived (for the latency metric).
	since time.Time
	// after is, for an urgent notice, the end of an earlier turn still
	// queued when it came: the notice waits until that is delivered.
	after *item
	// reply, for an urgent answer to one person (Lane.Reply), sends it
	// privately instead of posting it in the thread.
	reply func(context.Context, string) error
	// final says a keyed urgent notice is in its final words
	// (ReplaceNotice came before it was shown): it is posted with its
	// key, as the notice it replaces would end, and kept nowhere.
	final bool
}

// appendText adds s to a text item in amortised constant time; text
// keeps pointing at the whole of it.
func (it *item) appendText(s string) {
	it.buf.WriteString(s)
	it.text = it.buf.String()
}

type pendingEdit struct {
	key     string
	msgKind channels.Kind
	text    string
	since   time.Time
}

// NewLane returns a lane for one thread. The adapter's capabilities are
// read here (channels.As), and again as a turn begins on an idle lane.
func NewLane(o Options) *Lane {
	l := &Lane{
		ad:          o.Adapter,
		thread:      o.Thread,
		limits:      o.Adapter.Limits(),
		log:         o.Logger,
		queued:      map[string]*item{},
		handles:     map[string]channels.Handle{},
		noticeShown: map[string]string{},
		formKeys:    map[string]bool{},
		editFor:     map[string]*pendingEdit{},
		cards:       map[string]*card{},
		cardOf:      map[string]*card{},
		lastEdit:    map[channels.MessageID]time.Time{},
		idle:        true,
		onTurnEnd:   o.OnTurnEnd,
		obs:         o.Observer,
		retryFor:    o.RetryFor,
		onPosted:    o.OnPosted,
		onOpen:      o.OnOpen,
		readFile:    o.ReadFile,
		cuts:        map[string]string{},
	}
	if l.retryFor <= 0 {
		l.retryFor = DefaultRetryFor
	}
	if l.obs == nil {
		l.obs = nopObserver{}
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.readCaps()
	if l.limits.MinEditInterval <= 0 {
		l.limits.MinEditInterval = DefaultEditInterval
	}
	l.split = split.Limits{MaxChars: l.limits.MaxMessageChars, MaxLines: l.limits.MaxLines}
	l.SetStream(o.Stream)
	l.typing = typing.New(o.Typing, l.limits.TypingInterval)
	return l
}

// readCaps finds the adapter's capabilities (channels.As): the
// interfaces the lane calls, nil where the adapter lacks one.
func (l *Lane) readCaps() {
	a := l.ad
	l.editor, _ = channels.As[channels.Editor](a)
	l.typer, _ = channels.As[channels.Typer](a)
	l.prompter, _ = channels.As[channels.Prompter](a)
	l.carder = nil
	if c, ok := channels.As[channels.Carder](a); ok && channels.CapsOf(a).Cards && l.editor != nil {
		l.carder = c
	}
	l.uploader, _ = channels.As[channels.Uploader](a)
	l.turnEnd.ender, _ = channels.As[channels.TurnEnder](a)
	l.stopper = nil
	if l.typer != nil {
		l.stopper, _ = channels.As[channels.TypingStopper](a)
	} else {
		l.typingAct = typing.None
	}
	l.draftMode = l.editor != nil && !l.blocks
}

// SetStream applies new acp.stream settings from the next turn on.
func (l *Lane) SetStream(s projector.Settings) {
	l.finalOnly = s.DeliveryMode == projector.DeliveryFinalOnly
	l.blocks = s.LiveText == projector.LiveBlocks
	l.draftMode = l.editor != nil && !l.blocks
}

// BeginTurn tells the lane a turn started: typing may start, and a
// final_only turn holds everything until its TurnEnd. On a lane with
// nothing left to deliver it reads the adapter's capabilities again,
// which may have changed since (channels.CapsReporter: a cluster edge
// that announced another set); a lane still delivering keeps those its
// queue was made for.
func (l *Lane) BeginTurn(now time.Time) {
	if l.Idle() {
		l.readCaps()
	}
	l.hold = l.finalOnly
	l.doTyping(l.typing.TurnStart(now))
}

// AgentStarting shows typing (in instant mode) while the agent starts,
// before BeginTurn; StopTyping takes it back if the start fails.
func (l *Lane) AgentStarting(now time.Time) {
	l.doTyping(l.typing.TurnStart(now))
}

// Push queues outputs in order. It does no I/O except typing, which starts
// on the first visible output.
func (l *Lane) Push(now time.Time, outs ...projector.Output) {
	for _, o := range outs {
		l.push(now, o)
	}
}

func (l *Lane) push(now time.Time, o projector.Output) {
	switch o := o.(type) {
	case projector.Text:
		l.visible(now)
		if n := len(l.queue); o.NewMessage && n > 0 {
			// A new agent message, or text the agent posts on its own
			// (send_message), starts a chat message of its own.
			l.queue[n-1].sealed = true
		}
		l.appendText(now, itemText, o.Text)
	case projector.Thought:
		l.visible(now)
		l.appendText(now, itemThought, o.Text)
	case projector.Tool:
		l.visible(now)
		if l.carder != nil {
			l.cardTool(now, string(o.ID), o.Text, o.CutOff)
			return
		}
		key := "tool:" + string(o.ID)
		l.noteCut(key, o.CutOff)
		l.keyed(now, channels.KindTool, key, o.Text)
	case projector.Plan:
		l.visible(now)
		l.keyed(now, channels.KindPlan, "plan", o.Text)
	case projector.Image:
		l.image(now, o)
	case projector.Status:
		l.visible(now)
		l.enqueue(&item{kind: itemPost, msgKind: channels.KindStatus, text: o.Text, since: now})
	case projector.Notice:
		l.visible(now)
		l.enqueue(&item{kind: itemPost, msgKind: channels.KindNotice, text: o.Text, since: now})
	case projector.TurnEnd:
		l.enqueue(&item{kind: itemTurnEnd, end: o})
	}
}

func (l *Lane) visible(now time.Time) {
	if l.idle {
		l.idle = false
		l.doTyping(l.typing.LaneIdle(now, false))
	}
	l.doTyping(l.typing.Visible(now))
}

func (l *Lane) enqueue(it *item) {
	l.closeCard(it)
	l.queue = append(l.queue, it)
}

// enqueueBeforeTurnEnd queues it before the first TurnEnd, so a
// replacement message still belongs to its turn.
func (l *Lane) enqueueBeforeTurnEnd(it *item) {
	for i, q := range l.queue {
		if q.kind == itemTurnEnd {
			l.queue = append(l.queue[:i], append([]*item{it}, l.queue[i:]...)...)
			return
		}
	}
	l.enqueue(it)
}

// appendText adds text to the tail: adjacent text joins one item.
func (l *Lane) appendText(now time.Time, kind itemKind, s string) {
	if n := len(l.queue); n > 0 && l.queue[n-1].kind == kind && !l.queue[n-1].sealed {
		l.queue[n-1].appendText(s)
	} else {
		it := &item{kind: kind, msgKind: kindOf(kind)}
		it.appendText(s)
		l.enqueue(it)
	}
	if it := l.queue[len(l.queue)-1]; it.heldSince.IsZero() {
		it.heldSince = now
	}
	if it := l.queue[len(l.queue)-1]; it.since.IsZero() {
		it.since = now
	}
}

func kindOf(k itemKind) channels.Kind {
	if k == itemThought {
		return channels.KindThought
	}
	return channels.KindText
}

// keyed queues a new state of an edit-keyed message (a tool line, the
// plan). Latest wins: a state not yet delivered is replaced in place; a
// posted message is edited (or, without Editor, a new line is posted).
func (l *Lane) keyed(now time.Time, kind channels.Kind, key, text string) {
	if it := l.queued[key]; it != nil {
		it.text = text
		return
	}
	if _, posted := l.handles[key]; posted && l.editor != nil {
		if e := l.editFor[key]; e != nil {
			e.text = text
			return
		}
		e := &pendingEdit{key: key, msgKind: kind, text: text, since: now}
		l.editFor[key] = e
		l.edits = append(l.edits, e)
		return
	}
	it := &item{kind: itemPost, msgKind: kind, key: key, text: text, since: now}
	l.queued[key] = it
	l.enqueue(it)
}

// Idle reports whether the lane has nothing left to deliver.
func (l *Lane) Idle() bool { return len(l.queue) == 0 && len(l.edits) == 0 && len(l.urgent) == 0 }

// Step delivers what is due at now, calling the adapter (blocking I/O), and
// returns when Step must run again (zero: only after the next Push).
func (l *Lane) Step(ctx context.Context, now time.Time) time.Time {
	l.performTyping(ctx, now)
	next := l.step(ctx, now)
	if l.onOpen != nil {
		l.tellOpens()
	}
	l.tellTurnEnded(ctx)
	if tick, ok := l.typing.Deadline(); ok {
		if !tick.After(now) {
			l.doTyping(l.typing.Tick(now))
			if tick, ok = l.typing.Deadline(); ok && tick.After(now) {
				next = earliest(next, tick)
			}
		} else {
			next = earliest(next, tick)
		}
	}
	if l.Idle() && !l.idle {
		l.idle = true
		l.doTyping(l.typing.LaneIdle(now, true))
	}
	l.performTyping(ctx, now)
	if tick, ok := l.typing.Deadline(); ok && tick.After(now) {
		next = earliest(next, tick) // a refused refresh is retried
	}
	return next
}

func (l *Lane) step(ctx context.Context, now time.Time) time.Time {
	for ctx.Err() == nil {
		if now.Before(l.blockedUntil) {
			return l.blockedUntil
		}
		wait, progressed := l.stepEdits(ctx, now)
		if progressed {
			continue
		}
		if l.urgentDue() {
			w, progressed := l.stepUrgent(ctx, now)
			if !progressed {
				return earliest(wait, w)
			}
			continue
		}
		if l.hold && !l.queueHasTurnEnd() {
			// A held final_only turn still shows its prompts: the
			// turn waits for their answers.
			if it := l.heldPrompt(); it != nil {
				w, progressed := l.stepPrompt(ctx, now, it)
				if !progressed {
					return earliest(wait, w)
				}
				continue
			}
			return wait
		}
		if len(l.queue) == 0 {
			return wait
		}
		w, progressed := l.stepHead(ctx, now)
		if !progressed {
			return earliest(wait, w)
		}
	}
	return time.Time{}
}

func (l *Lane) queueHasTurnEnd() bool {
	for _, it := range l.queue {
		if it.kind == itemTurnEnd {
			return true
		}
	}
	return false
}

// stepEdits applies due edits of posted messages, oldest request first.
func (l *Lane) stepEdits(ctx context.Context, now time.Time) (wait time.Time, progressed bool) {
	for i := 0; i < len(l.edits); i++ {
		e := l.edits[i]
		h := l.handles[e.key]
		if due := l.lastEdit[h.ID].Add(l.limits.MinEditInterval); now.Before(due) {
			wait = earliest(wait, due)
			continue
		}
		var err error
		if strings.HasPrefix(e.key, cardPrefix) {
			_, err = l.sendCard(ctx, e.key, h)
		} else {
			err = l.editor.Edit(ctx, h, channels.Message{Kind: e.msgKind, Text: e.text, Key: msgKey(e.key)})
		}
		switch l.judge(now, "edit", err) {
		case retry:
			// Rate limited, or the platform is unreachable: the edit
			// stays pending (later states replace its text) and is
			// tried again; it never turns into a new message.
			return l.blockedUntil, false
		case abandon:
			l.abandon(now, err)
			return time.Time{}, true
		}
		l.removeEdit(i)
		if err != nil {
			// Refused for good (the message is gone, say): show the
			// state as a new message instead.
			l.log.Warn("edit failed; posting a new message instead", "thread", l.thread, "key", e.key, "err", err)
			delete(l.handles, e.key)
			l.noteGone(e.key)
			it := &item{kind: itemPost, msgKind: e.msgKind, key: e.key, text: e.text, since: e.since}
			l.queued[e.key] = it
			l.enqueueBeforeTurnEnd(it)
		} else {
			l.lastEdit[h.ID] = now
			l.obs.Delivered("edit", e.msgKind, now.Sub(e.since))
			l.noteShown(e.key, h)
			if strings.HasPrefix(e.key, promptPrefix) || strings.HasPrefix(e.key, noticePrefix) {
				delete(l.handles, e.key) // resolved: never edited again
			}
		}
		return time.Time{}, true
	}
	return wait, false
}

func (l *Lane) removeEdit(i int) {
	delete(l.editFor, l.edits[i].key)
	l.edits = append(l.edits[:i], l.edits[i+1:]...)
}

// stepHead delivers the head of the ordered queue.
func (l *Lane) stepHead(ctx context.Context, now time.Time) (time.Time, bool) {
	it := l.queue[0]
	switch it.kind {
	case itemTurnEnd:
		if len(l.edits) > 0 {
			// Let pending edits land first: nothing is left "running".
			return time.Time{}, false
		}
		l.pop()
		l.endTurn(now, it.end)
		return time.Time{}, true
	case itemText, itemThought:
		closed := len(l.queue) > 1
		return l.stepText(ctx, now, it, closed)
	case itemPrompt:
		return l.stepPrompt(ctx, now, it)
	case itemFile:
		return l.stepFile(ctx, now, it)
	}
	if w := l.postDue(now); !w.IsZero() {
		return w, false
	}
	h, err := l.postItem(ctx, now, it)
	switch l.judge(now, "post", err) {
	case retry:
		return l.blockedUntil, false
	case abandon:
		l.abandon(now, err)
		return time.Time{}, true
	}
	if err == nil {
		l.typingAfterPost(now)
		l.sent(h)
	}
	l.pop()
	l.posted(now, it, h, err)
	return time.Time{}, true
}

// postItem posts the message of item it.
func (l *Lane) postItem(ctx context.Context, now time.Time, it *item) (channels.Handle, error) {
	if strings.HasPrefix(it.key, cardPrefix) {
		return l.sendCard(ctx, it.key, channels.Handle{})
	}
	return l.ad.Post(ctx, l.thread, channels.Message{Kind: it.msgKind, Text: it.text, Key: msgKey(it.key)})
}

// posted books the outcome of posting it, taken off its queue: the
// handle of a keyed message, or the loss when it was refused.
func (l *Lane) posted(now time.Time, it *item, h channels.Handle, err error) {
	if it.key != "" {
		delete(l.queued, it.key)
	}
	if err != nil {
		l.dropped(it, it.text, err)
		return
	}
	if !it.since.IsZero() {
		l.obs.Delivered("post", it.msgKind, now.Sub(it.since))
	}
	l.lossTold(it)
	if it.key == "" {
		return
	}
	if h.Known() {
		l.handles[it.key] = h
		l.lastEdit[h.ID] = now
		l.noteShown(it.key, h)
	} else {
		l.log.Info("no message id returned; later states will be new messages", "thread", l.thread, "key", it.key)
	}
}

// msgKey is the edit key shown to adapters: a tool's call id, or "plan".
func msgKey(key string) string {
	id, _ := strings.CutPrefix(key, "tool:")
	return id
}

func (l *Lane) pop() { l.queue = l.queue[1:] }

// postDue returns when the next post is allowed, zero if now.
func (l *Lane) postDue(now time.Time) time.Time {
	if l.limits.MinPostInterval <= 0 || l.lastPost.IsZero() {
		return time.Time{}
	}
	if due := l.lastPost.Add(l.limits.MinPostInterval); now.Before(due) {
		return due
	}
	return time.Time{}
}

// rateLimited handles a rate-limit error: the lane waits; nothing is lost.
func (l *Lane) rateLimited(now time.Time, err error) bool {
	var rl *channels.RateLimitError
	if !errors.As(err, &rl) {
		return false
	}
	wait := rl.RetryAfter
	if wait <= 0 {
		wait = 100 * time.Millisecond
	}
	l.blockedUntil = now.Add(wait)
	l.obs.RateLimited(rl.Scope)
	l.log.Debug("rate limited", "thread", l.thread, "retry_after", wait, "scope", rl.Scope)
	return true
}

func (l *Lane) endTurn(now time.Time, end projector.TurnEnd) {
	l.hold = false
	l.seg = segment{}
	l.carry = ""
	for k := range l.handles {
		if !strings.HasPrefix(k, promptPrefix) && !strings.HasPrefix(k, noticePrefix) {
			delete(l.handles, k)
		}
	}
	clear(l.queued)
	l.forgetCards()
	l.forgetOpens()
	clear(l.lastEdit)
	l.doTyping(l.typing.TurnEnd(now))
	if l.Idle() {
		l.idle = true
		l.doTyping(l.typing.LaneIdle(now, true))
	}
	l.turnEnded()
	if l.onTurnEnd != nil {
		l.onTurnEnd(end)
	}
}

// doTyping records a typing action; Step performs it.
func (l *Lane) doTyping(a typing.Action) {
	if l.typer == nil || a == typing.None {
		return
	}
	l.typingAct = a
}

// typingAfterPost notes that a message was posted: where the platform
// hides the typing indicator then, typing is shown again while the turn
// runs.
func (l *Lane) typingAfterPost(now time.Time) {
	if l.limits.TypingClearedByPost {
		l.doTyping(l.typing.Cleared(now))
	}
}

// performTyping makes the platform call for the pending typing action.
// Typing is best effort: errors are logged; a start or refresh refused by
// a rate limit is tried again when the limit allows.
func (l *Lane) performTyping(ctx context.Context, now time.Time) {
	a := l.typingAct
	if a == typing.None || l.typer == nil {
		return
	}
	l.typingAct = typing.None
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var err error
	switch a {
	case typing.Start, typing.Refresh:
		err = l.typer.Typing(ctx, l.thread)
	case typing.Stop:
		if l.stopper != nil {
			err = l.stopper.StopTyping(ctx, l.thread)
		}
	}
	if err != nil {
		l.log.Debug("typing failed", "thread", l.thread, "action", a.String(), "err", err)
		var rl *channels.RateLimitError
		if a != typing.Stop && errors.As(err, &rl) {
			l.typing.Retry(now.Add(max(rl.RetryAfter, 100*time.Millisecond)))
		}
	}
}

func earliest(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero():
		return a
	case b.Before(a):
		return b
	}
	return a
}

// StopTyping stops the typing indicator until the next turn (a stop was
// requested: nothing is shown as working while the agent winds down).
func (l *Lane) StopTyping() {
	l.doTyping(l.typing.Halt())
}
