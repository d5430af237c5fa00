package owner

import (
	"context"
	"time"

	"github.com/acpgw/gateway/agent"
	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/store"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/thread"
)

// pending is a permission prompt waiting for an answer. Its fields after
// answer belong to the thread's owner.
type pending struct {
	id     string
	req    agent.PermissionRequest
	ctx    context.Context // the request's
	asked  time.Time
	answer chan answered // capacity 1; written once
	text   string        // the prompt's text, kept for the resolved version
	// closing: settled by the shutdown; msg is the message showing it,
	// once posted.
	closing bool
	msg     channels.Handle
}

type answered struct {
	option string
	ok     bool
}

// Permission implements agent.Handler: it hands the request to the
// thread's owner, which applies the channel's policy or asks people, and
// blocks until there is an answer.
func (t *Thread) Permission(ctx context.Context, req agent.PermissionRequest) (string, bool) {
	p := &pending{id: NewID(), req: req, ctx: ctx, asked: time.Now(), answer: make(chan answered, 1)}
	if !t.inbox.send(permissionEv{p: p}) {
		return "", false // the thread has shut down
	}
	select {
	case a := <-p.answer:
		return a.option, a.ok
	case <-ctx.Done():
	}
	// The agent gave up waiting: the prompt is withdrawn (the owner
	// answers cancelled, unless it answered already).
	t.inbox.event(thread.PermissionWithdrawn{ID: p.id})
	a := <-p.answer
	return a.option, a.ok
}

// permission is the agent's request p on the owner: the machine says
// whether the channel's policy answers it (AnswerByPolicy) or people are
// shown it (ShowPrompt).
func (t *Thread) permission(p *pending) {
	t.prompts[p.id] = p
	t.apply(thread.PermissionAsked{ID: p.id, Timeout: t.policy.Permissions.Timeout, Kind: p.req.Tool.Kind, Options: optionIDs(p.req.Options)})
}

// answerByPolicy answers p as the channel's policy said: recorded, the
// thread told.
func (t *Thread) answerByPolicy(p *pending, allow bool) {
	delete(t.prompts, p.id)
	req, policy := p.req, t.policy.Permissions.Policy
	kind := "reject"
	if allow {
		kind = "allow"
	}
	opt, ok := thread.PickOption(req.Options, kind)
	t.recordPermission(req, opt.ID, time.Now())
	t.laneNotice(sysmsg.ByPolicy{Allowed: allow, Policy: policy, Tool: projector.PermissionTitle(req.Tool)})
	p.answer <- answered{option: opt.ID, ok: ok}
}

// showPrompt shows p to people and records it.
func (t *Thread) showPrompt(p *pending) {
	req := p.req
	policy := t.policy.Permissions
	storeOpts := make([]store.PromptOption, 0, len(req.Options))
	for _, o := range req.Options {
		storeOpts = append(storeOpts, store.PromptOption{ID: o.ID, Name: o.Name, Kind: o.Kind})
	}
	t.recordPermission(req, "", p.asked)
	rec := store.Prompt{
		ID: p.id, Thread: t.ref, SessionID: req.SessionID, ToolCallID: string(req.Tool.ID),
		Title: projector.PermissionTitle(req.Tool), Kind: req.Tool.Kind, Options: storeOpts, Status: store.PromptPending,
		CreatedAt: p.asked, ExpiresAt: p.asked.Add(policy.Timeout),
	}
	st, ref, log := t.d.Store, t.ref, t.d.Log
	t.saves.write("", "the permission prompt", func(ctx context.Context) error { return st.AddPrompt(ctx, rec) },
		func(err error) { log.Error("cannot store the permission prompt", "thread", ref, "err", err) })
	p.text = t.view().ShowPrompt(p.id, req, t.cwd, func(h channels.Handle, err error) {
		t.inbox.send(postedEv{p: p, h: h, err: err})
	})
}

// posted: the lane posted p (as h), or could not (err).
func (t *Thread) posted(p *pending, h channels.Handle, err error) {
	if err != nil {
		// Nobody can answer a prompt they cannot see: the agent gets
		// "cancelled" now rather than a reject after the timeout, and
		// the thread is told.
		t.d.Log.Error("the permission prompt could not be shown; answered cancelled", "thread", t.ref, "err", err)
		t.apply(thread.PermissionUnshown{ID: p.id})
		return
	}
	if !h.Known() {
		return
	}
	p.msg = h
	st, log, id := t.d.Store, t.d.Log, p.id
	t.saves.write("", "the prompt's message id", func(ctx context.Context) error { return st.SetPromptMessage(ctx, id, string(h.ID)) },
		func(err error) { log.Warn("cannot store the prompt's message id", "err", err) })
	if p.closing {
		// Settled by the shutdown while it was being posted: the
		// shutdown left its message to this.
		gctx, cancel := context.WithTimeout(t.ctx, t.d.Host.ShutdownGrace())
		defer cancel()
		t.expireMessageAtShutdown(gctx, p, h)
	}
}

// settle answers p to the agent as the machine decided, edits the
// prompt's message to show the outcome, and records it.
func (t *Thread) settle(p *pending, f thread.SettlePrompt) {
	delete(t.prompts, p.id)
	switch {
	case f.Unshown:
		// Asked after a stop: nobody is shown the question; the agent
		// is told the turn is cancelled.
		t.d.Log.Info("permission request after a stop: answered cancelled", "thread", t.ref)
		p.answer <- answered{}
		return
	case f.Shutdown:
		t.expireAtShutdown(p)
		return
	}
	by := f.By
	var a answered
	var status store.PromptStatus
	var outcome sysmsg.Outcome
	a.option, a.ok, status, outcome = thread.Settlement(p.req, f, p.asked, time.Now())
	p.answer <- a
	t.view().Settle(p.id, p.text, outcome)
	who := by.ID
	if who == "" {
		who = by.Name
	}
	t.resolvePrompt(p.id, status, a.option, who)
	if t.tr != nil {
		t.tr.PermissionAnswered(p.id, a.option, time.Now())
	}
	t.d.Log.Info("permission prompt settled", "thread", t.ref, "status", string(status), "option", a.option, "by", who)
}

// resolvePrompt records the outcome of prompt id (through the thread's
// saves, after its record and its message's id).
func (t *Thread) resolvePrompt(id string, status store.PromptStatus, option, who string) {
	st, ref, log, at := t.d.Store, t.ref, t.d.Log, time.Now()
	t.saves.write("", "the prompt's outcome", func(ctx context.Context) error {
		_, err := st.ResolvePrompt(ctx, id, status, option, who, at)
		return err
	}, func(err error) { log.Warn("cannot record the prompt's outcome", "thread", ref, "err", err) })
}

func (t *Thread) recordPermission(req agent.PermissionRequest, chosen string, at time.Time) {
	if t.tr == nil {
		return
	}
	opts := make([]store.PromptOption, 0, len(req.Options))
	for _, o := range req.Options {
		opts = append(opts, store.PromptOption{ID: o.ID, Name: o.Name, Kind: o.Kind})
	}
	e := store.PermissionEntry{ToolCallID: string(req.Tool.ID), Title: projector.PermissionTitle(req.Tool), Options: opts, Chosen: chosen, Asked: at}
	if chosen != "" {
		e.Answered = at
	}
	t.tr.Permission(e)
}

// renderPermission is the text of the prompt for req, as
// Permission shows it (TestRenderPermission reads it).
func renderPermission(req agent.PermissionRequest, cwd string) string {
	return projector.PermissionPrompt(req.Tool, thread.PermissionOptions(req.Options), cwd).Text
}

// optionIDs are the ids of a prompt's options, in order.
func optionIDs(opts []agent.PermissionOption) []string {
	ids := make([]string, len(opts))
	for i, o := range opts {
		ids[i] = o.ID
	}
	return ids
}
