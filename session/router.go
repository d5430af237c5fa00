package session

import (
	"cmp"
	"context"
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
	"github.com/acpgw/gateway/thread"
	"github.com/acpgw/gateway/thread/owner"
	"github.com/acpgw/gateway/workspace"
)

// Options configure a Router.
type Options struct {
	// Store keeps bindings, prompts, usage and transcripts. Required.
	Store store.Backend
	// EventLogDir is where each session's raw frames go; "" disables the
	// event log. EventLog sets segment sizes.
	EventLogDir string
	EventLog    eventlog.Config
	// OpenFrameLog, if set, opens a session's raw frame log instead of a
	// file in EventLogDir (a worker's: the cluster's event log stream).
	OpenFrameLog func(sessionID string) (FrameLog, error)
	// Agent returns the spec of the named agent ("" = the default).
	Agent func(name string) (agent.Spec, bool)
	// Cwd is the working directory of new sessions when the agent's spec
	// has none ("" = the gateway's).
	Cwd string
	// Registry, if set, records the running agents' process groups (so a
	// gateway started after a crash stops those left behind).
	Registry *agent.Registry
	// Policy returns the settings for a thread (overrides resolved). Nil
	// uses DefaultPolicy.
	Policy func(t channels.ThreadRef, space string) Policy
	// Access holds a rule per platform; Open lists platforms that admit
	// people themselves (the web chat, by token): everyone they admit may
	// do everything unless a rule there lists users, roles or approvers.
	Access map[string]AccessRule
	Open   []string
	// Abort configures stop words; BotNames are names people may write
	// before them ("@gateway stop").
	Abort    abort.Config
	BotNames []string
	Limits   Limits
	// Delivery is the delivery section: how long output is retried
	// while a platform cannot be reached.
	Delivery dispatch.Config
	Logger   *slog.Logger
	// OnTurnEnd, if set, is called when everything of a turn has been
	// delivered to its thread (for metrics and tests).
	OnTurnEnd func(channels.ThreadRef, projector.TurnEnd)
	// OnTurnFinished, if set, is called when the agent has answered a
	// prompt (or failed), before the turn's output is all delivered.
	OnTurnFinished func(t channels.ThreadRef, stopReason string, err error)
	// OnUpdate, if set, sees every live update's raw tag and, when it
	// showed nothing, why (projector.Suppressed); for metrics. It runs on
	// the thread's owner goroutine and must be cheap.
	OnUpdate func(tag, suppressed string)
	// Observer, if set, returns the delivery observer for a platform's
	// lanes (metrics).
	Observer func(platform string) dispatch.Observer
	// CatchUp configures the answering of messages sent to bound threads
	// while the gateway was down (off when its Window is zero).
	CatchUp CatchUp
	// Threads is the threads section: when idle threads leave memory.
	Threads Threads
	// Workspaces, if set, gives each thread its working directory as its
	// agent's settings (AgentWorkspace) ask: opened when the thread's
	// agent starts, removed when the thread is deleted or idle past
	// workspace.keep (swept every hour). Nil: every thread works in its
	// agent's cwd.
	Workspaces     *workspace.Manager
	AgentWorkspace func(name string) workspace.Agent
	// MCPDir, if set, is where each thread's MCP server (package
	// mcpgate) has its socket; every session is given that server
	// (unless its agent's spec has NoMCP). "": no MCP server. MCPCommand
	// is the gateway binary the agent runs as "gateway mcp" ("" = this
	// executable).
	MCPDir     string
	MCPCommand string
	// OnAgent, if set, is told when a thread's agent process starts
	// ("started") and when the thread lets it go ("stopped": reaped or
	// shut down; "exited": it died on its own), for metrics and tests.
	OnAgent func(t channels.ThreadRef, event string)
	// Shared says the store is shared with other workers of a cluster,
	// which run threads of their own: Run then leaves the store's pending
	// prompts, running turns and catch-up alone (they may be another
	// worker's, live), and a thread's left-overs are taken up when this
	// worker takes the thread (Adopt).
	Shared bool
	// OnEvict, if set, is told when an idle thread left memory
	// (Threads.EvictAfter): a cluster worker gives up its lease then.
	OnEvict func(t channels.ThreadRef)
}

// Router routes inbound chat events to threads. Create it with New, add
// adapters, then call Run.
type Router struct {
	o     Options
	log   *slog.Logger
	abort *abort.Detector
	slots *slots // the agent processes that may run at once

	ctx   context.Context // the Run context, set before ready is closed
	ready chan struct{}   // closed when Run started
	wg    sync.WaitGroup  // owns every thread goroutine

	closingLogs owner.ClosingLogs // event logs being closed (framelog.go)

	mu       sync.Mutex // guards the fields below
	adapters map[string]channels.Adapter
	threads  map[channels.ThreadRef]*owner.Thread
	policy   func(channels.ThreadRef, string) Policy
	refused  map[string]time.Time // thread + user → when last told
	catchUp  catchUpState
	retaken  map[channels.ThreadRef][]owner.Retaken // prompts Adopt asked again, in order
	// lastSeen is, per thread Adopt took up, the last message the
	// worker before handled: the thread's owner takes it for one it
	// took (dedupe.go).
	lastSeen map[channels.ThreadRef]channels.MessageID
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
		slots:    newSlots(o.Limits.MaxProcesses),
		adapters: map[string]channels.Adapter{},
		threads:  map[channels.ThreadRef]*owner.Thread{},
		policy:   o.Policy,
		refused:  map[string]time.Time{},
		catchUp:  newCatchUpState(),
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

// Settings are what a configuration reload changes in a router
// (Configure). A nil Policy, Abort, Agent or AgentWorkspace keeps what
// is set; Access is replaced whatever it is (nil: no rules).
type Settings struct {
	// Policy resolves a thread's settings (Options.Policy); from each
	// thread's next turn.
	Policy func(t channels.ThreadRef, space string) Policy
	// Abort is the stop-word configuration (Options.Abort).
	Abort *abort.Config
	// Access is the access rules (Options.Access).
	Access map[string]AccessRule
	// Agent looks agents up (Options.Agent): agents started from now on
	// use it; running ones keep their command.
	Agent func(name string) (agent.Spec, bool)
	// AgentWorkspace is the agents' workspace settings
	// (Options.AgentWorkspace: agents.list.NAME.workspace,
	// .workspaceDir, .cwd): threads whose workspace is made from now on
	// use them; those made keep theirs.
	AgentWorkspace func(name string) workspace.Agent
}

// Configure applies a configuration reload, all at once.
func (r *Router) Configure(s Settings) {
	var d *abort.Detector
	if s.Abort != nil {
		d = abort.New(*s.Abort, r.o.BotNames...)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.Policy != nil {
		r.policy = s.Policy
	}
	if d != nil {
		r.abort, r.o.Abort = d, *s.Abort
	}
	r.o.Access = s.Access
	if s.Agent != nil {
		r.o.Agent = s.Agent
	}
	if s.AgentWorkspace != nil {
		r.o.AgentWorkspace = s.AgentWorkspace
	}
}

// agentWorkspace returns the workspace settings lookup (nil: none).
func (r *Router) agentWorkspace() func(name string) workspace.Agent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.o.AgentWorkspace
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

// Run marks the prompts left pending by an earlier run as expired (editing
// their messages), answers what was sent while the gateway was down
// (Options.CatchUp), then runs until ctx ends. On return every turn has
// been cancelled, every agent stopped and every thread goroutine has
// exited.
func (r *Router) Run(ctx context.Context) error {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	var (
		backlog map[string][]store.Seen
		stale   []store.Prompt
		running []store.RunningTurn
		err     error
	)
	if !r.o.Shared {
		backlog = r.prepareCatchUp(ctx)
		// Read before any message is let in: every prompt pending now
		// was left by an earlier run.
		stale, err = r.o.Store.PendingPrompts(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.Error("cannot read the permission prompts an earlier run left pending", "err", err)
		}
		running, err = r.o.Store.RunningTurns(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.Error("cannot read the turns an earlier run left running", "err", err)
		}
	}
	close(r.ready)
	r.expireStalePrompts(ctx, stale)
	r.tellInterrupted(ctx, running)
	r.startCatchUp(ctx, backlog)
	r.wg.Go(func() { r.sweepWorkspaces(ctx) })
	<-ctx.Done()
	r.shutdown()
	return nil
}

// detached is the context of what the router does for a deleted or
// archived thread (its records, its workspace): the Run context's values
// without its end, since that work is not given up because the gateway
// stops meanwhile, bounded by d. It is for the router's goroutines,
// which start after Run.
func (r *Router) detached(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.ctx), d)
}

// Handle is the adapters' inbound handler. It never blocks on an agent or
// on outbound delivery; before Run has started it waits for it. A message
// to a thread whose backlog the catch-up has not read yet waits for it.
// An event handed over once ctx ended (an adapter stopping hands over
// what it read) is dropped: the next start's catch-up reads it again.
func (r *Router) Handle(ctx context.Context, in channels.Inbound) {
	if ctx.Err() != nil {
		return
	}
	select {
	case <-r.ready:
	case <-ctx.Done():
		return
	}
	if r.hold(in) {
		return
	}
	r.handle(ctx, in)
}

// handle is Handle once the catch-up let in through.
func (r *Router) handle(ctx context.Context, in channels.Inbound) {
	ad, acc, detector, ok := r.gate(ctx, in)
	if !ok {
		return
	}
	intent := in.Intent()
	switch intent {
	case channels.IntentInvalid:
		r.log.Warn("inbound event with more than one intent (choice, stop, command, close); ignored", "thread", in.Thread, "id", in.ID)
		return
	case channels.IntentChoice:
		r.answer(ctx, ad, acc, in)
		return
	case channels.IntentClose:
		if platformSaid(in) {
			r.gone(in.Thread)
			return
		}
		r.close(ctx, ad, acc, in)
		return
	case channels.IntentArchive:
		r.archive(in.Thread)
		return
	case channels.IntentMissed:
		r.missed(ctx, in)
		return
	case channels.IntentReaction:
		r.reaction(acc, in)
		return
	case channels.IntentForm:
		r.answerForm(ctx, ad, acc, in)
		return
	case channels.IntentSuggest:
		r.suggest(in, acc)
		return
	case channels.IntentMessage:
		if strings.TrimSpace(in.Text) == "" && len(in.Files) == 0 {
			return
		}
	}
	// A worker of a cluster marks a message the thread's owner takes
	// seen once the owner marked it taken (inbound): the next owner drops
	// a message seen, which must then be answered or asked again.
	seenLater := r.o.Shared
	if !seenLater {
		r.markSeen(ctx, in)
	}
	seen := func() {
		if seenLater {
			r.markSeen(ctx, in)
		}
	}
	if !acc.MayPrompt(in) {
		seen()
		r.refuse(ctx, ad, in)
		return
	}
	t := r.threadOf(in.Thread, in.Space, ad)
	if t == nil {
		return
	}
	stop := isStop(in, detector)
	if !stop && intent == channels.IntentCommand {
		// The thread's machine decides (machine_commands.go).
		for !t.Command(in, acc) {
			if t = r.threadOf(in.Thread, in.Space, ad); t == nil {
				return
			}
		}
		seen()
		return
	}
	if !stop && in.Agent != "" && !r.pickAllowed(ctx, ad, t, in) {
		seen()
		return
	}
	ev := owner.Message{In: in, Access: acc, Stop: stop, All: stop && isStopAll(in, detector), Caught: !stop && r.caught(in), Seen: seenLater}
	if seenLater && !stop {
		// A worker returns (and the cluster acknowledges the event) once
		// the thread marked it taken: a worker killed before that leaves
		// it to the stream, which gives it to the next owner.
		ev.Taken = make(chan struct{})
	}
	for !t.Message(ev) {
		// Evicted just now: a new owner takes the thread up from the
		// store (or the router is shutting down: nil).
		if t = r.threadOf(in.Thread, in.Space, ad); t == nil {
			return
		}
	}
	if ev.Taken != nil {
		select {
		case <-ev.Taken:
		case <-ctx.Done():
		}
	}
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
	if !acc.MayPrompt(in) {
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
func (r *Router) gate(ctx context.Context, in channels.Inbound) (channels.Adapter, owner.Access, *abort.Detector, bool) {
	select {
	case <-r.ready:
	case <-ctx.Done():
		return nil, owner.Access{}, nil, false
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, owner.Access{}, nil, false
	}
	ad := r.adapters[in.Thread.Platform]
	rule, hasRule := r.o.Access[in.Thread.Platform]
	detector := r.abort
	r.mu.Unlock()
	if ad == nil {
		r.log.Warn("message from a platform with no adapter", "thread", in.Thread)
		return nil, owner.Access{}, nil, false
	}
	open := slices.Contains(r.o.Open, in.Thread.Platform)
	acc := owner.Access{Rule: rule, HasRule: hasRule, Open: open}
	if in.Author.Self || (in.Author.Bot && !rule.AllowBots) {
		return nil, owner.Access{}, nil, false // bots, including this gateway, are ignored by default
	}
	return ad, acc, detector, true
}

// threadOf returns the thread's owner, starting it if needed.
func (r *Router) threadOf(ref channels.ThreadRef, space string, ad channels.Adapter) *owner.Thread {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	if t := r.threads[ref]; t != nil {
		return t
	}
	policy := r.policy(ref, space)
	t := owner.New(r.deps(), r.machineConfigLocked(policy), ref, space, ad, policy)
	if id, ok := r.lastSeen[ref]; ok {
		t.Took(id)
		delete(r.lastSeen, ref)
	}
	r.threads[ref] = t
	r.wg.Go(t.Run)
	return t
}

// evict drops t, which has had nothing to do for Threads.EvictAfter, from
// the threads in memory, unless an event for it came meanwhile; it
// reports whether it did. Its next message starts a new owner, which
// resumes the thread from the store.
func (r *Router) evict(t *owner.Thread) bool {
	r.mu.Lock()
	if r.closed || r.threads[t.Ref()] != t || !t.CloseIfIdle() {
		r.mu.Unlock()
		return false
	}
	delete(r.threads, t.Ref())
	r.mu.Unlock()
	r.log.Info("idle thread evicted", "thread", t.Ref())
	if r.o.OnEvict != nil {
		r.o.OnEvict(t.Ref())
	}
	return true
}

// Threads returns how many threads the router holds in memory (each with
// its owner goroutine), for metrics. It does no I/O.
func (r *Router) Threads() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.threads)
}

// answer handles a click on a prompt option: the thread's owner answers
// it, or says why not.
func (r *Router) answer(ctx context.Context, ad channels.Adapter, acc owner.Access, in channels.Inbound) {
	promptID, optionID, ok := strings.Cut(in.Choice.OptionID, thread.OptionSep)
	r.mu.Lock()
	t := r.threads[in.Thread]
	r.mu.Unlock()
	if !ok || t == nil || !t.Choice(in, acc, promptID, optionID) {
		r.reply(ad, in, sysmsg.RefusePromptGone)
	}
}

// refuse tells a person once per thread and hour that they may not use
// the gateway here.
func (r *Router) refuse(ctx context.Context, ad channels.Adapter, in channels.Inbound) {
	if !r.refusedOnce(in) {
		return
	}
	r.log.Info("message refused by the access policy", "thread", in.Thread, "user", in.Author.ID)
	r.reply(ad, in, sysmsg.RefuseAccess)
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

// reply answers privately where the platform can, else in the thread,
// trying again while the router runs. It runs on its own goroutine so
// the handler never blocks on I/O.
func (r *Router) reply(ad channels.Adapter, in channels.Inbound, n sysmsg.Notice) {
	if !r.enter() {
		return
	}
	go func() {
		defer r.wg.Done()
		err := owner.Patiently(r.ctx, r.o.Delivery.RetryFor, func(ctx context.Context) error {
			if in.Reply != nil {
				return in.Reply(ctx, n.Body()) // a private answer goes unmarked
			}
			_, err := ad.Post(ctx, in.Thread, channels.Message{Kind: channels.KindNotice, Text: sysmsg.Text(n)})
			return err
		})
		if err != nil {
			r.log.Warn("reply failed", "thread", in.Thread, "err", err)
		}
	}()
}

// expireStalePrompts marks prompts left pending by an earlier run as
// expired, after editing their messages so their buttons go away. An edit
// that fails is tried again, less and less often, while the router runs;
// a prompt whose message could not be edited stays pending for the next
// start.
func (r *Router) expireStalePrompts(ctx context.Context, stale []store.Prompt) {
	for _, p := range stale {
		r.mu.Lock()
		ad := r.adapters[p.Thread.Platform]
		r.mu.Unlock()
		ed, ok := channels.As[channels.Editor](ad)
		if !ok || p.MessageID == "" {
			// No buttons to take away (or no way to): expired as it is.
			r.expirePrompt(ctx, p)
			continue
		}
		r.wg.Go(func() {
			if r.editStalePrompt(ctx, ed, p) {
				r.expirePrompt(ctx, p)
			}
		})
	}
}

// editStalePrompt edits p's message to say the gateway restarted, until
// that works, the message is gone, or ctx ends (then it reports false).
func (r *Router) editStalePrompt(ctx context.Context, ed channels.Editor, p store.Prompt) bool {
	h := channels.Handle{Thread: p.Thread, ID: channels.MessageID(p.MessageID)}
	m := channels.Message{Kind: channels.KindPermission, Text: sysmsg.Text(sysmsg.StalePrompt{Title: p.Title})}
	return r.retry(ctx, p.Thread, "edit a stale permission prompt", func(ctx context.Context) error { return ed.Edit(ctx, h, m) })
}

// expirePrompt records that the stale prompt p expired.
func (r *Router) expirePrompt(ctx context.Context, p store.Prompt) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := r.o.Store.ResolvePrompt(ctx, p.ID, store.PromptExpired, "", "gateway restart", time.Now()); err != nil {
		r.log.Warn("cannot record that a stale permission prompt expired", "thread", p.Thread, "err", err)
	}
}

// shutdownGrace is Limits.ShutdownGrace, five seconds if unset: it bounds
// what a shutdown posts and edits in each thread (the turn's interruption,
// pending permission prompts expired), straight through the adapter since
// the threads' lanes have stopped.
func (r *Router) shutdownGrace() time.Duration {
	if d := r.o.Limits.ShutdownGrace; d > 0 {
		return d
	}
	return 5 * time.Second
}

// shutdown cancels running turns, stops every agent and waits for every
// goroutine.
func (r *Router) shutdown() {
	r.mu.Lock()
	r.closed = true
	threads := make([]*owner.Thread, 0, len(r.threads))
	for _, t := range r.threads {
		threads = append(threads, t)
	}
	r.mu.Unlock()
	r.log.Info("shutting down: cancelling running turns and stopping agents", "threads", len(threads))
	for _, t := range threads {
		t.Event(thread.Shutdown{})
	}
	// What the threads still do after the grace (a reply tried again, a
	// prompt's edit) is given up then.
	giveUp := time.AfterFunc(r.shutdownGrace(), func() {
		for _, t := range threads {
			t.Cancel()
		}
	})
	defer func() {
		giveUp.Stop()
		for _, t := range threads {
			t.Cancel()
		}
	}()
	var cut, stopped int
	for _, t := range threads {
		<-t.Done()
		c, s := t.Interrupted()
		if c {
			cut++
		}
		if s {
			stopped++
		}
	}
	r.wg.Wait()
	r.log.Info("shut down", "turnsInterrupted", cut, "agentsStopped", stopped)
}

// acquire takes a process slot for t. When every slot is taken it stops
// the least recently used idle agent of another thread, or else waits in
// line (first come, first served across threads) until a slot is handed
// over, telling the thread its place. It returns ctx's cause when ctx
// ends first (a stop, or shutdown): t is out of the line then.
func (r *Router) acquire(ctx context.Context, t *owner.Thread) error {
	w, ahead := r.slots.take()
	if w == nil {
		return nil
	}
	r.reapIdle(t) // hands its slot to the first in line
	select {
	case <-w.granted:
		return nil
	default:
	}
	t.Notice(sysmsg.WaitingForAgent{Ahead: ahead})
	r.log.Info("waiting for a free agent slot", "thread", t.Ref(), "ahead", ahead)
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
	}
	if !r.slots.leave(w) {
		r.slots.release() // handed over just now: pass it on
	}
	return context.Cause(ctx)
}

// release gives a process slot back: to the first thread in line, if
// any, else to the pool.
func (r *Router) release() { r.slots.release() }

// giveWay stops the least recently used idle agent when a thread waits
// for a slot (an agent became idle).
func (r *Router) giveWay() {
	if r.slots.waiting() {
		r.reapIdle(nil)
	}
}

// reapIdle stops the least recently used idle agent of a thread other
// than except; its slot goes to the first in line. It asks the threads'
// owners, most idle first, until one stops its agent.
func (r *Router) reapIdle(except *owner.Thread) {
	type idle struct {
		t  *owner.Thread
		at int64
	}
	r.mu.Lock()
	var idles []idle
	for _, o := range r.threads {
		if at := o.IdleSince(); o != except && at != 0 {
			idles = append(idles, idle{o, at})
		}
	}
	r.mu.Unlock()
	slices.SortFunc(idles, func(a, b idle) int { return cmp.Compare(a.at, b.at) })
	for _, o := range idles {
		if o.t.Reap("to make room for another thread") {
			return
		}
	}
}

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
