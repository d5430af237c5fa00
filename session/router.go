package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/acpgw/gateway/abort"
	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/dispatch"
	"github.com/acpgw/gateway/eventlog"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// Options configure a Router.
type Options struct {
	// Store keeps bindings, prompts, usage and transcripts. Required.
	Store *store.Store
	// EventLogDir is where each session's raw frames go; "" disables the
	// event log. EventLog sets segment sizes.
	EventLogDir string
	EventLog    eventlog.Config
	// Agent returns the spec of the named agent ("" = the default).
	Agent func(name string) (agent.Spec, bool)
	// Cwd is the working directory of new sessions when the agent's spec
	// has none ("" = the gateway's).
	Cwd string
	// Policy returns the settings for a thread (overrides resolved). Nil
	// uses DefaultPolicy.
	Policy func(t channels.ThreadRef, space string) Policy
	// Access holds a rule per platform; Open lists platforms where
	// everyone may do everything when they have no rule (the local web
	// chat on 127.0.0.1).
	Access map[string]AccessRule
	Open   []string
	// Abort configures stop words; BotNames are names people may write
	// before them ("@gateway stop").
	Abort    abort.Config
	BotNames []string
	Limits   Limits
	Logger   *slog.Logger
	// OnTurnEnd, if set, is called when everything of a turn has been
	// delivered to its thread (for metrics and tests).
	OnTurnEnd func(channels.ThreadRef, projector.TurnEnd)
	// OnTurnFinished, if set, is called when the agent has answered a
	// prompt (or failed), before the turn's output is all delivered.
	OnTurnFinished func(t channels.ThreadRef, stopReason string, err error)
	// OnUpdate, if set, sees every live update's raw tag and, when it
	// showed nothing, why (projector.Suppressed); for metrics. It runs on
	// the agent's reader goroutine and must be cheap.
	OnUpdate func(tag, suppressed string)
	// Observer, if set, returns the delivery observer for a platform's
	// lanes (metrics).
	Observer func(platform string) dispatch.Observer
	// OnAgent, if set, is told when a thread's agent process starts
	// ("started") and when the thread lets it go ("stopped": reaped or
	// shut down; "exited": it died on its own), for metrics and tests.
	OnAgent func(t channels.ThreadRef, event string)
}

// Router routes inbound chat events to threads. Create it with New, add
// adapters, then call Run.
type Router struct {
	o     Options
	log   *slog.Logger
	abort *abort.Detector
	slots chan struct{} // one token per running agent process

	ctx   context.Context // the Run context, set before ready is closed
	ready chan struct{}   // closed when Run started
	wg    sync.WaitGroup  // owns every thread goroutine

	mu       sync.Mutex // guards the fields below
	adapters map[string]channels.Adapter
	threads  map[channels.ThreadRef]*thread
	policy   func(channels.ThreadRef, string) Policy
	refused  map[string]time.Time // thread + user → when last told
	closed   bool
}

// New returns a Router. It does no I/O.
func New(o Options) *Router {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Limits.MaxProcesses <= 0 {
		o.Limits.MaxProcesses = 8
	}
	if o.Limits.StopGrace <= 0 {
		o.Limits.StopGrace = 3 * time.Second
	}
	if o.Abort.Grace <= 0 {
		o.Abort = abort.DefaultConfig()
	}
	r := &Router{
		o:        o,
		log:      o.Logger,
		abort:    abort.New(o.Abort, o.BotNames...),
		slots:    make(chan struct{}, o.Limits.MaxProcesses),
		adapters: map[string]channels.Adapter{},
		threads:  map[channels.ThreadRef]*thread{},
		policy:   o.Policy,
		refused:  map[string]time.Time{},
		ready:    make(chan struct{}),
	}
	if r.policy == nil {
		r.policy = func(channels.ThreadRef, string) Policy { return DefaultPolicy() }
	}
	return r
}

// Add registers the adapter that serves platform. Call before Run.
func (r *Router) Add(platform string, a channels.Adapter) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.adapters[platform] = a
}

// SetPolicy replaces the policy resolver (a configuration reload); it
// applies from each thread's next turn.
func (r *Router) SetPolicy(f func(channels.ThreadRef, string) Policy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.policy = f
}

// SetAbort replaces the stop-word configuration (a reload).
func (r *Router) SetAbort(c abort.Config) {
	d := abort.New(c, r.o.BotNames...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.abort = d
	r.o.Abort = c
}

// SetAgents replaces the agent lookup (a reload): agents started from
// now on use it; running ones keep their command.
func (r *Router) SetAgents(f func(name string) (agent.Spec, bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.o.Agent = f
}

// startTimeout is Limits.StartTimeout, two minutes if unset.
func (r *Router) startTimeout() time.Duration {
	if d := r.o.Limits.StartTimeout; d > 0 {
		return d
	}
	return 2 * time.Minute
}

// agentSpec looks up the agent called name ("" = the default).
func (r *Router) agentSpec(name string) (agent.Spec, bool) {
	r.mu.Lock()
	f := r.o.Agent
	r.mu.Unlock()
	return f(name)
}

// SetAccess replaces the access rules (a reload).
func (r *Router) SetAccess(rules map[string]AccessRule) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.o.Access = rules
}

// Run marks the prompts left pending by an earlier run as expired (editing
// their messages), then runs until ctx ends. On return every turn has been
// cancelled, every agent stopped and every thread goroutine has exited.
func (r *Router) Run(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	close(r.ready)
	r.expireStalePrompts(ctx)
	<-ctx.Done()
	r.shutdown()
	return nil
}

// Handle is the adapters' inbound handler. It never blocks on an agent or
// on outbound delivery; before Run has started it waits for it.
func (r *Router) Handle(ctx context.Context, in channels.Inbound) {
	ad, acc, detector, ok := r.gate(ctx, in)
	if !ok {
		return
	}
	if in.Choice != nil {
		r.answer(ctx, ad, acc, in)
		return
	}
	if strings.TrimSpace(in.Text) == "" && len(in.Files) == 0 {
		return
	}
	if !acc.mayPrompt(in) {
		r.refuse(ctx, ad, in)
		return
	}
	t := r.thread(in.Thread, in.Space, ad)
	if t == nil {
		return
	}
	if detector.IsStop(in.Text) {
		t.stop(in.Author, stopByPerson)
		return
	}
	if t.answerByNumber(acc, in) {
		return
	}
	t.enqueue(in)
}

// Admit reports whether in's author may prompt where in was sent. When
// not, the author is told (at most once an hour), as Handle would tell
// them. An adapter that must create something before it can deliver a
// message, such as a Discord thread for a mention, asks first, so that a
// person without access opens nothing. Bots the rules do not allow are
// not admitted and not told.
func (r *Router) Admit(ctx context.Context, in channels.Inbound) bool {
	ad, acc, _, ok := r.gate(ctx, in)
	if !ok {
		return false
	}
	if !acc.mayPrompt(in) {
		r.refuse(ctx, ad, in)
		return false
	}
	return true
}

// gate returns what Handle and Admit need to judge in: the platform's
// adapter, its access rule and the stop detector. It reports false for
// events to drop without a word: the router is not running, the platform
// has no adapter, or the author is a bot the rules do not allow. Before
// Run has started it waits for it.
func (r *Router) gate(ctx context.Context, in channels.Inbound) (channels.Adapter, access, *abort.Detector, bool) {
	select {
	case <-r.ready:
	case <-ctx.Done():
		return nil, access{}, nil, false
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, access{}, nil, false
	}
	ad := r.adapters[in.Thread.Platform]
	rule, hasRule := r.o.Access[in.Thread.Platform]
	detector := r.abort
	r.mu.Unlock()
	if ad == nil {
		r.log.Warn("message from a platform with no adapter", "thread", in.Thread)
		return nil, access{}, nil, false
	}
	open := !hasRule && slices.Contains(r.o.Open, in.Thread.Platform)
	acc := access{rule: rule, hasRule: hasRule, open: open}
	if in.Author.Bot && !rule.AllowBots {
		return nil, access{}, nil, false // bots, including this gateway, are ignored by default
	}
	return ad, acc, detector, true
}

// thread returns the thread's owner, starting it if needed.
func (r *Router) thread(ref channels.ThreadRef, space string, ad channels.Adapter) *thread {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if t := r.threads[ref]; t != nil {
		return t
	}
	t := newThread(r, ref, space, ad, r.policy(ref, space))
	r.threads[ref] = t
	r.wg.Go(func() { t.run(r.ctx) })
	return t
}

// answer handles a click on a prompt option.
func (r *Router) answer(ctx context.Context, ad channels.Adapter, acc access, in channels.Inbound) {
	promptID, optionID, ok := strings.Cut(in.Choice.OptionID, optionSep)
	r.mu.Lock()
	t := r.threads[in.Thread]
	r.mu.Unlock()
	var p *pending
	if ok && t != nil {
		p = t.pendingPrompt(promptID)
	}
	if p == nil {
		r.reply(ctx, ad, in, "This prompt is no longer waiting for an answer (it expired, was answered, or the gateway restarted).")
		return
	}
	if !acc.mayApprove(in) {
		r.reply(ctx, ad, in, "Sorry, only approvers can answer this prompt.")
		return
	}
	if !t.resolve(p, store.PromptAnswered, optionID, in.Author) {
		r.reply(ctx, ad, in, "This prompt was already answered.")
	}
}

// refuse tells a person once per thread and hour that they may not use
// the gateway here.
func (r *Router) refuse(ctx context.Context, ad channels.Adapter, in channels.Inbound) {
	if !r.refusedOnce(in) {
		return
	}
	r.log.Info("message refused by the access policy", "thread", in.Thread, "user", in.Author.ID)
	r.reply(ctx, ad, in, "Sorry, you don't have access to the agent here. Ask an operator to add you to the allow-list.")
}

// refusedOnce reports whether a refusal should be sent to in's author in
// a thread the gateway does not serve: once per thread and interval.
func (r *Router) refusedOnce(in channels.Inbound) bool {
	key := in.Thread.String() + "\x00" + in.Author.ID
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.refused[key]; ok && time.Since(at) < refusalInterval {
		return false
	}
	if len(r.refused) > 10000 {
		clear(r.refused) // bounded: at worst someone is told twice
	}
	r.refused[key] = time.Now()
	return true
}

// refusalInterval is how often one person is told they lack access.
const refusalInterval = time.Hour

// reply answers privately where the platform can, else in the thread.
// It runs on its own goroutine so the handler never blocks on I/O.
func (r *Router) reply(ctx context.Context, ad channels.Adapter, in channels.Inbound, text string) {
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		var err error
		if in.Reply != nil {
			err = in.Reply(ctx, text)
		} else {
			err = postPatiently(r.ctx, ad, in.Thread, channels.Message{Kind: channels.KindNotice, Text: sysmsg.Prefix(text)})
		}
		if err != nil {
			r.log.Warn("reply failed", "thread", in.Thread, "err", err)
		}
	}()
}

// expireStalePrompts marks prompts left by an earlier run as expired and
// edits their messages so their buttons go away.
func (r *Router) expireStalePrompts(ctx context.Context) {
	stale, err := r.o.Store.ExpireAll(ctx, time.Now())
	if err != nil {
		if ctx.Err() == nil { // else the gateway stops; they expire next time
			r.log.Error("cannot expire stale permission prompts", "err", err)
		}
		return
	}
	for _, p := range stale {
		r.mu.Lock()
		ad := r.adapters[p.Thread.Platform]
		r.mu.Unlock()
		ed, ok := ad.(channels.Editor)
		if !ok || p.MessageID == "" {
			continue
		}
		h := channels.Handle{Thread: p.Thread, ID: channels.MessageID(p.MessageID)}
		text := sysmsg.Prefix("Permission prompt expired: the gateway restarted before anyone answered (" + p.Title + ").")
		r.wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := ed.Edit(ctx, h, channels.Message{Kind: channels.KindPermission, Text: text}); err != nil {
				r.log.Warn("cannot edit a stale prompt", "thread", p.Thread, "err", err)
			}
		})
	}
}

// shutdown cancels running turns, stops every agent and waits for every
// goroutine.
func (r *Router) shutdown() {
	r.mu.Lock()
	r.closed = true
	threads := make([]*thread, 0, len(r.threads))
	for _, t := range r.threads {
		threads = append(threads, t)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, t := range threads {
		wg.Go(t.shutdown)
	}
	wg.Wait()
	r.wg.Wait()
}

// acquire takes a process slot for t, stopping the least recently used
// idle agent of another thread when all are taken. It returns false when
// every agent is busy.
func (r *Router) acquire(t *thread) bool {
	select {
	case r.slots <- struct{}{}:
		return true
	default:
	}
	r.mu.Lock()
	var lru *thread
	var lruAt time.Time
	for _, o := range r.threads {
		if o == t {
			continue
		}
		if at, ok := o.idleSince(); ok && (lru == nil || at.Before(lruAt)) {
			lru, lruAt = o, at
		}
	}
	r.mu.Unlock()
	if lru == nil || !lru.reap("to make room for another thread") {
		return false
	}
	select {
	case r.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (r *Router) release() { <-r.slots }

// enter registers one more goroutine the router owns; the caller runs it
// and calls r.wg.Done. It returns false once the router is shutting down.
func (r *Router) enter() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.wg.Add(1)
	return true
}

func (r *Router) agentEvent(t channels.ThreadRef, event string) {
	if r.o.OnAgent != nil {
		r.o.OnAgent(t, event)
	}
}

// cwd returns the working directory of a new session.
func (r *Router) cwd(spec agent.Spec) string {
	dir := spec.Dir
	if dir == "" {
		dir = r.o.Cwd
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

// newID returns a short random id for a prompt.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var errBusy = errors.New("all agent processes are busy")

func describeExit(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, "exit status"); i >= 0 {
		return msg[i:]
	}
	if i := strings.Index(msg, "signal:"); i >= 0 {
		return msg[i:]
	}
	return fmt.Sprint(err)
}
