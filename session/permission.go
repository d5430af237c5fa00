package session

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
)

// optionSep joins a prompt id and an ACP option id in a button's id, so a
// click names its prompt even after a restart.
const optionSep = "/"

// pending is a permission prompt waiting for an answer.
type pending struct {
	id     string
	req    agent.PermissionRequest
	text   string // the prompt's text, kept for the resolved version
	asked  time.Time
	answer chan answered // capacity 1; written once by resolve
	// Guarded by thread.mu: done once settled; closing when settled by
	// the shutdown; msg is the message showing it, once posted.
	done    bool
	closing bool
	msg     channels.Handle
}

type answered struct {
	option string
	ok     bool
}

// Permission implements agent.Handler: it applies the channel's policy or
// asks people, and blocks until there is an answer.
func (t *thread) Permission(ctx context.Context, req agent.PermissionRequest) (string, bool) {
	t.mu.Lock()
	policy := t.policy.Permissions
	stopped := t.turn != nil && t.turn.stopper != ""
	cwd := t.cwd
	t.mu.Unlock()
	if stopped {
		// Asked after a stop: nobody is shown the question; the agent
		// is told the turn is cancelled.
		t.r.log.Info("permission request after a stop: answered cancelled", "thread", t.ref)
		return "", false
	}
	title := projector.PermissionTitle(req.Tool)
	auto := ""
	switch policy.Policy {
	case PermissionApproveAll:
		auto = "allow"
	case PermissionDenyAll:
		auto = "reject"
	case PermissionApproveReads:
		switch req.Tool.Kind {
		case "read", "search", "think":
			auto = "allow"
		}
	}
	if auto != "" {
		opt, ok := pickOption(req.Options, auto)
		t.recordPermission(req, opt.ID, time.Now())
		t.laneNotice(sysmsg.ByPolicy{Allowed: auto == "allow", Policy: policy.Policy, Tool: title})
		return opt.ID, ok
	}

	p := &pending{id: newID(), req: req, asked: time.Now(), answer: make(chan answered, 1)}
	view := projector.PermissionPrompt(req.Tool, permissionOptions(req.Options), cwd)
	p.text = view.Text
	options := make([]channels.Option, 0, len(view.Options))
	for _, o := range view.Options {
		options = append(options, channels.Option{ID: p.id + optionSep + o.ID, Label: o.Label, Style: o.Style})
	}
	storeOpts := make([]store.PromptOption, 0, len(req.Options))
	for _, o := range req.Options {
		storeOpts = append(storeOpts, store.PromptOption{ID: o.ID, Name: o.Name, Kind: o.Kind})
	}
	t.mu.Lock()
	t.prompts[p.id] = p
	t.mu.Unlock()
	t.recordPermission(req, "", p.asked)
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	err := t.r.o.Store.AddPrompt(sctx, store.Prompt{
		ID: p.id, Thread: t.ref, SessionID: req.SessionID, ToolCallID: string(req.Tool.ID),
		Title: title, Kind: req.Tool.Kind, Options: storeOpts, Status: store.PromptPending,
		CreatedAt: p.asked, ExpiresAt: p.asked.Add(policy.Timeout),
	})
	cancel()
	if err != nil {
		t.r.log.Error("cannot store the permission prompt", "thread", t.ref, "err", err)
	}
	t.runner.Prompt(p.id, channels.Choice{Text: p.text, Options: options}, func(h channels.Handle, err error) {
		if err != nil {
			// Nobody can answer a prompt they cannot see: the agent
			// gets "cancelled" now rather than a reject after the
			// timeout, and the thread is told (off the lane's
			// goroutine, which calls this: resolve writes the store).
			t.r.log.Error("the permission prompt could not be shown; answered cancelled", "thread", t.ref, "err", err)
			if t.r.enter() {
				go func() {
					defer t.r.wg.Done()
					t.settle(p, store.PromptCancelled, "", channels.Author{}, sysmsg.Cancelled{Unshown: true})
				}()
			}
			return
		}
		if h.Known() {
			t.mu.Lock()
			p.msg = h
			// Settled by the shutdown while it was being posted: the
			// shutdown left its message to this callback.
			late := p.closing
			t.mu.Unlock()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := t.r.o.Store.SetPromptMessage(ctx, p.id, string(h.ID)); err != nil {
				t.r.log.Warn("cannot store the prompt's message id", "err", err)
			}
			if late {
				gctx, cancel := context.WithTimeout(context.Background(), t.r.shutdownGrace())
				defer cancel()
				t.expireMessageAtShutdown(gctx, p, h)
			}
		}
	})

	timer := time.NewTimer(policy.Timeout)
	defer timer.Stop()
	select {
	case a := <-p.answer:
		return a.option, a.ok
	case <-timer.C:
		t.resolve(p, store.PromptExpired, "", channels.Author{})
	case <-ctx.Done():
		t.resolve(p, store.PromptCancelled, "", channels.Author{Name: sysmsg.TheAgent})
	}
	a := <-p.answer
	return a.option, a.ok
}

// resolve settles p once: answered with optionID by someone, expired (the
// agent gets the reject option) or cancelled. It edits the prompt message
// and records the outcome. It returns false if p was already settled.
func (t *thread) resolve(p *pending, status store.PromptStatus, optionID string, by channels.Author) bool {
	return t.settle(p, status, optionID, by, sysmsg.Cancelled{})
}

// settle is resolve; why, if set, says why a prompt was cancelled.
func (t *thread) settle(p *pending, status store.PromptStatus, optionID string, by channels.Author, why sysmsg.Cancelled) bool {
	t.mu.Lock()
	if p.done {
		t.mu.Unlock()
		return false
	}
	p.done = true
	delete(t.prompts, p.id)
	t.mu.Unlock()

	var a answered
	var outcome sysmsg.Outcome
	switch status {
	case store.PromptAnswered:
		opt, ok := findOption(p.req.Options, optionID)
		if !ok {
			// A forged or stale option id: treat as cancelled.
			status = store.PromptCancelled
			outcome = sysmsg.Cancelled{Unknown: true}
			break
		}
		a = answered{option: opt.ID, ok: true}
		outcome = sysmsg.Chosen{Name: opt.Name, Kind: opt.Kind, By: displayName(by)}
	case store.PromptExpired:
		opt, ok := pickOption(p.req.Options, "reject")
		a = answered{option: opt.ID, ok: ok}
		outcome = sysmsg.Expired{After: time.Since(p.asked), Option: opt.Name}
	default:
		if why == (sysmsg.Cancelled{}) && (by.Name != "" || by.ID != "") {
			why.By = displayName(by)
		}
		outcome = why
	}
	p.answer <- a
	t.runner.Resolve(p.id, sysmsg.Settled(p.text, outcome))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	who := by.ID
	if who == "" {
		who = by.Name
	}
	if _, err := t.r.o.Store.ResolvePrompt(ctx, p.id, status, a.option, who, time.Now()); err != nil {
		t.r.log.Warn("cannot record the prompt's outcome", "thread", t.ref, "err", err)
	}
	t.mu.Lock()
	if t.tr != nil {
		t.tr.PermissionAnswered(p.id, a.option, time.Now())
	}
	t.mu.Unlock()
	t.r.log.Info("permission prompt settled", "thread", t.ref, "status", string(status), "option", a.option, "by", who)
	return true
}

// expireAtShutdown settles p for a gateway that is shutting down: the
// agent gets the cancelled outcome at once, and the prompt's message is
// edited straight through the adapter (the thread's lane has stopped) to
// say the gateway restarted, without its buttons, within ctx. A prompt
// whose post is still under way is edited by the post's callback once its
// message is known. The stored prompt stays pending until its message
// shows no buttons, so that the next start edits what the shutdown could
// not (Router.expireStalePrompts). It does I/O and blocks.
func (t *thread) expireAtShutdown(ctx context.Context, p *pending) {
	t.mu.Lock()
	if p.done {
		t.mu.Unlock()
		return
	}
	p.done, p.closing = true, true
	delete(t.prompts, p.id)
	h := p.msg
	if t.tr != nil {
		t.tr.PermissionAnswered(p.id, "", time.Now())
	}
	t.mu.Unlock()
	p.answer <- answered{}
	if h.Known() {
		t.expireMessageAtShutdown(ctx, p, h)
	}
}

// expireMessageAtShutdown edits h, the message of p, which the shutdown
// settled, and records p expired once its buttons are gone.
func (t *thread) expireMessageAtShutdown(ctx context.Context, p *pending, h channels.Handle) {
	ed, canEdit := t.ad.(channels.Editor)
	if canEdit {
		err := ed.Edit(ctx, h, channels.Message{Kind: channels.KindPermission, Text: sysmsg.Settled(p.text, sysmsg.Restarted{})})
		if err != nil && !errors.Is(err, channels.ErrMessageGone) {
			t.r.log.Warn("cannot edit a permission prompt at shutdown; the next start does", "thread", t.ref, "err", err)
			return
		}
	}
	// Without Editor there are no buttons to take away.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if _, err := t.r.o.Store.ResolvePrompt(sctx, p.id, store.PromptExpired, "", "gateway shutdown", time.Now()); err != nil {
		t.r.log.Warn("cannot record the prompt's outcome", "thread", t.ref, "err", err)
	}
	t.r.log.Info("permission prompt expired at shutdown", "thread", t.ref, "prompt", p.id)
}

func (t *thread) recordPermission(req agent.PermissionRequest, chosen string, at time.Time) {
	opts := make([]store.PromptOption, 0, len(req.Options))
	for _, o := range req.Options {
		opts = append(opts, store.PromptOption{ID: o.ID, Name: o.Name, Kind: o.Kind})
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tr == nil {
		return
	}
	e := store.PermissionEntry{ToolCallID: string(req.Tool.ID), Title: projector.PermissionTitle(req.Tool), Options: opts, Chosen: chosen, Asked: at}
	if chosen != "" {
		e.Answered = at
	}
	t.tr.Permission(e)
}

// pendingPrompt returns the thread's pending prompt id, nil if none.
func (t *thread) pendingPrompt(id string) *pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.prompts[id]
}

// allPending returns the pending prompts, oldest first.
func (t *thread) allPending() []*pending {
	t.mu.Lock()
	defer t.mu.Unlock()
	ps := make([]*pending, 0, len(t.prompts))
	for _, p := range t.prompts {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b *pending) int { return a.asked.Compare(b.asked) })
	return ps
}

// answerByNumber answers the oldest pending prompt from a reply such as
// "1" or "2." where the channel has no buttons. It reports whether the
// message was such an answer.
func (t *thread) answerByNumber(acc access, in channels.Inbound) bool {
	if _, buttons := t.ad.(channels.Prompter); buttons {
		return false
	}
	text := strings.TrimRight(strings.TrimSpace(in.Text), ".)")
	n, err := strconv.Atoi(text)
	if err != nil {
		return false
	}
	ps := t.allPending()
	if len(ps) == 0 {
		return false
	}
	p := ps[0]
	if n < 1 || n > len(p.req.Options) {
		t.notice(sysmsg.AnswerRange{Options: len(p.req.Options)})
		return true
	}
	if !acc.mayApprove(in) {
		t.r.reply(context.Background(), t.ad, in, sysmsg.RefuseNotApprover)
		return true
	}
	t.resolve(p, store.PromptAnswered, p.req.Options[n-1].ID, in.Author)
	return true
}

// pickOption returns the first option of the wanted sort ("allow" or
// "reject"), preferring the once-only kind.
func pickOption(opts []agent.PermissionOption, want string) (agent.PermissionOption, bool) {
	for _, kind := range []string{want + "_once", want + "_always"} {
		for _, o := range opts {
			if o.Kind == kind {
				return o, true
			}
		}
	}
	return agent.PermissionOption{}, false
}

func findOption(opts []agent.PermissionOption, id string) (agent.PermissionOption, bool) {
	for _, o := range opts {
		if o.ID == id {
			return o, true
		}
	}
	return agent.PermissionOption{}, false
}

// permissionOptions converts the agent's options for the projector.
func permissionOptions(opts []agent.PermissionOption) []projector.PermissionOption {
	out := make([]projector.PermissionOption, len(opts))
	for i, o := range opts {
		out[i] = projector.PermissionOption{ID: o.ID, Name: o.Name, Kind: o.Kind}
	}
	return out
}

// renderPermission is the text of the prompt for req, as
// Permission shows it (TestRenderPermission reads it).
func renderPermission(req agent.PermissionRequest, cwd string) string {
	return projector.PermissionPrompt(req.Tool, permissionOptions(req.Options), cwd).Text
}
