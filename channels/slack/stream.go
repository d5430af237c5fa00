package slack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/acpgw/gateway/channels"
)

// Streaming is how the adapter shows the agent's text and tool calls
// (channels.slack.streaming).
type Streaming string

const (
	// StreamingNative streams through chat.startStream, appendStream and
	// stopStream: text as Markdown, tool calls as task_update chunks and
	// the plan as plan_update, in one streamed message at a time per
	// thread. A workspace that refuses the methods falls back to edits.
	StreamingNative Streaming = "native"
	// StreamingEdits posts messages and edits them in place
	// (chat.postMessage, chat.update), the text converted to mrkdwn.
	StreamingEdits Streaming = "edits"
)

// noStreamErrors are the chat.startStream errors that mean the workspace
// or the token cannot stream at all (not this message): the adapter then
// uses edits for good.
var noStreamErrors = []string{
	"unknown_method", "missing_scope", "not_allowed_token_type", "method_deprecated",
	"feature_not_enabled", "not_enabled", "team_not_enabled", "access_denied",
}

// closedStreamErrors are the appendStream errors of a stream Slack closed
// (after a silence, or at its size limit): what was streamed stays, and
// the message continues with chat.update.
var closedStreamErrors = []string{"message_not_in_streaming_state", "msg_too_long", "streaming_limit_exceeded"}

// stream is a message the adapter streams into (or streamed into).
type stream struct {
	thread channels.ThreadRef
	ts     string
	// open is false once the adapter stopped it or Slack closed it.
	open bool
	// text is the Markdown the message shows (the text handle's), "" for
	// a stream started by a tool call.
	text string
	// hasText: the stream's own text belongs to a text handle.
	hasText bool
}

// maxStreams bounds the streamed messages the adapter remembers.
const maxStreams = 10000

// taskSep separates a stream's ts from a chunk's key in the handles of
// tool calls and plans shown as chunks.
const taskSep = "#"

// native reports whether messages in t stream: native mode, a thread
// (streams need a thread_ts) and a workspace that did not refuse.
func (a *Adapter) native(t channels.ThreadRef) bool {
	if t.Thread == "" || (a.o.Streaming != "" && a.o.Streaming != StreamingNative) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return !a.noStream
}

// noteRecipient remembers who wrote in thread t last and in which
// workspace, the recipient of the thread's streams.
func (a *Adapter) noteRecipient(t channels.ThreadRef, user, team string) {
	if user == "" || t.Thread == "" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.recipients == nil || len(a.recipients) > 10000 {
		a.recipients = map[string][2]string{} // bounded; at worst a stream lacks its recipient once
	}
	a.recipients[t.Channel+"/"+t.Thread] = [2]string{user, team}
}

// streamOptions returns the options every chat.startStream of t carries.
func (a *Adapter) streamOptions(t channels.ThreadRef) []slack.MsgOption {
	a.mu.Lock()
	r := a.recipients[t.Channel+"/"+t.Thread]
	team := r[1]
	if team == "" && a.caps != nil {
		team = a.caps.TeamID
	}
	a.mu.Unlock()
	opts := []slack.MsgOption{slack.MsgOptionTS(t.Thread)}
	if r[0] != "" {
		opts = append(opts, slack.MsgOptionRecipientUserID(r[0]))
	}
	if team != "" {
		opts = append(opts, slack.MsgOptionRecipientTeamID(team))
	}
	return opts
}

// streamPost posts m in t as a stream: text starts a new stream; a tool
// call or the plan goes into the thread's open stream as a chunk (or
// starts one). ok is false when m is not streamed (another kind, or the
// workspace cannot stream): the caller posts it the classic way.
func (a *Adapter) streamPost(ctx context.Context, t channels.ThreadRef, m channels.Message) (h channels.Handle, ok bool, err error) {
	switch m.Kind {
	case channels.KindText:
		a.stopOpen(ctx, t)
		return a.startStream(ctx, t, m, slack.MsgOptionMarkdownText(channels.TrimLead(m.Text)))
	case channels.KindTool, channels.KindPlan:
		key := chunkKey(m)
		if s := a.openStream(t); s != nil {
			err := a.appendStream(ctx, s, slack.MsgOptionChunks(chunk(m)))
			if err == nil {
				return channels.Handle{Thread: t, ID: channels.MessageID(s.ts + taskSep + key)}, true, nil
			}
			if !errors.Is(err, errStreamClosed) {
				return channels.Handle{}, true, err
			}
		}
		h, ok, err := a.startStream(ctx, t, m, slack.MsgOptionChunks(chunk(m)))
		if ok && err == nil {
			h.ID += channels.MessageID(taskSep + key)
		}
		return h, ok, err
	}
	a.stopOpen(ctx, t) // a classic message ends the stream, keeping the order
	return channels.Handle{}, false, nil
}

// startStream calls chat.startStream in t. A refusal of the method itself
// turns streaming off for the workspace and returns ok false.
func (a *Adapter) startStream(ctx context.Context, t channels.ThreadRef, m channels.Message, content slack.MsgOption) (channels.Handle, bool, error) {
	now := time.Now()
	if ahead, err := a.limits.take("chat.startStream", t.Channel+"/"+t.Thread, now); err != nil {
		a.tellBusy(ctx, t, ahead, err)
		return channels.Handle{}, true, err
	}
	if err := a.pace(t.Channel, t.Thread, now); err != nil {
		var wait time.Duration
		if rl, ok := errors.AsType[*channels.RateLimitError](err); ok {
			wait = rl.RetryAfter
		}
		a.limits.hold("chat.startStream", t.Channel+"/"+t.Thread, wait, now)
		return channels.Handle{}, true, err
	}
	opts := append(a.streamOptions(t), content)
	_, ts, err := a.api.StartStreamContext(ctx, t.Channel, opts...)
	if err != nil {
		if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok && slices.Contains(noStreamErrors, se.Err) {
			a.mu.Lock()
			a.noStream = true
			a.mu.Unlock()
			a.log.Info("slack: the workspace does not accept streamed messages; using posts and edits", "err", se.Err)
			a.unpace(t.Channel)
			return channels.Handle{}, false, nil
		}
		return channels.Handle{}, true, a.apiErr("chat.startStream", err)
	}
	s := &stream{thread: t, ts: ts, open: true}
	if m.Kind == channels.KindText {
		s.text, s.hasText = m.Text, true
	}
	a.mu.Lock()
	if a.streams == nil {
		a.streams = map[string]*stream{}
		a.openStreams = map[string]*stream{}
	}
	if len(a.streams) > maxStreams {
		// Forget ended streams first; a message forgotten is edited the
		// classic way (or, refused, continued in a new message).
		maps.DeleteFunc(a.streams, func(_ string, s *stream) bool { return !s.open })
		if len(a.streams) > maxStreams {
			clear(a.streams)
			clear(a.openStreams)
		}
	}
	a.streams[t.Channel+"/"+ts] = s
	a.openStreams[t.Channel+"/"+t.Thread] = s
	a.mu.Unlock()
	return channels.Handle{Thread: t, ID: channels.MessageID(ts)}, true, nil
}

// errStreamClosed means Slack closed a stream.
var errStreamClosed = errors.New("the stream was closed")

// appendStream sends opts to the open stream s. When Slack closed it, s
// is marked closed and the error wraps errStreamClosed.
func (a *Adapter) appendStream(ctx context.Context, s *stream, opts ...slack.MsgOption) error {
	if err := a.admit("chat.appendStream", s.thread); err != nil {
		return err
	}
	_, _, err := a.api.AppendStreamContext(ctx, s.thread.Channel, s.ts, opts...)
	if err == nil {
		return nil
	}
	if se, ok := errors.AsType[slack.SlackErrorResponse](err); ok && slices.Contains(closedStreamErrors, se.Err) {
		a.closeStream(s)
		return fmt.Errorf("slack: chat.appendStream: %s: %w", se.Err, errStreamClosed)
	}
	return a.apiErr("chat.appendStream", err)
}

// openStream returns the open stream of thread t, or nil.
func (a *Adapter) openStream(t channels.ThreadRef) *stream {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := a.openStreams[t.Channel+"/"+t.Thread]
	if s == nil || !s.open {
		return nil
	}
	return s
}

// closeStream marks s closed.
func (a *Adapter) closeStream(s *stream) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s.open = false
	k := s.thread.Channel + "/" + s.thread.Thread
	if a.openStreams[k] == s {
		delete(a.openStreams, k)
	}
}

// stopOpen stops the open stream of t, if any (chat.stopStream). Errors
// are logged: Slack closes a stream by itself after a while.
func (a *Adapter) stopOpen(ctx context.Context, t channels.ThreadRef) {
	s := a.openStream(t)
	if s == nil {
		return
	}
	a.closeStream(s)
	a.stopStream(ctx, s, time.Now())
}

// FinishStreams stops the open stream of thread t, if any, so its
// message shows as complete. The gateway calls it when a turn ends; the
// next message in the thread stops it as well. It blocks on I/O.
func (a *Adapter) FinishStreams(ctx context.Context, t channels.ThreadRef) {
	a.stopOpen(ctx, t)
}

var _ channels.TurnEnder = (*Adapter)(nil)

// TurnEnded implements channels.TurnEnder: the turn's last output is out,
// so its open stream is stopped (FinishStreams).
func (a *Adapter) TurnEnded(ctx context.Context, t channels.ThreadRef) {
	a.FinishStreams(ctx, t)
}

// streamEdit edits a message posted as a stream. ok is false when h is
// not one (the caller edits it the classic way).
func (a *Adapter) streamEdit(ctx context.Context, h channels.Handle, m channels.Message) (ok bool, err error) {
	id := string(h.ID)
	ts, _, chunked := strings.Cut(id, taskSep)
	a.mu.Lock()
	s := a.streams[h.Thread.Channel+"/"+ts]
	a.mu.Unlock()
	if s == nil {
		return false, nil
	}
	if chunked {
		if !a.isOpen(s) {
			return true, fmt.Errorf("slack: the stream of %s ended: %w", id, channels.ErrMessageGone)
		}
		err := a.appendStream(ctx, s, slack.MsgOptionChunks(chunk(m)))
		if errors.Is(err, errStreamClosed) {
			return true, fmt.Errorf("%w: %w", err, channels.ErrMessageGone)
		}
		return true, err
	}
	a.mu.Lock()
	sent := s.text
	a.mu.Unlock()
	if a.isOpen(s) {
		if rest, grows := strings.CutPrefix(m.Text, sent); grows {
			if rest == "" {
				return true, nil
			}
			err := a.appendStream(ctx, s, slack.MsgOptionMarkdownText(rest))
			if err == nil {
				a.mu.Lock()
				s.text = m.Text
				a.mu.Unlock()
				return true, nil
			}
			if !errors.Is(err, errStreamClosed) {
				return true, err
			}
			a.log.Debug("slack: a stream was closed; continuing with edits", "thread", h.Thread, "err", err)
		} else {
			a.stopOpen(ctx, h.Thread)
		}
	}
	// Closed: the message shows what was streamed; it becomes the whole text.
	if err := a.admit("chat.update", h.Thread); err != nil {
		return true, err
	}
	_, _, _, err = a.api.UpdateMessageContext(ctx, h.Thread.Channel, ts, slack.MsgOptionMarkdownText(channels.TrimLead(m.Text)))
	if err != nil {
		return true, a.apiErr("chat.update", err)
	}
	a.mu.Lock()
	s.text = m.Text
	a.mu.Unlock()
	return true, nil
}

func (a *Adapter) isOpen(s *stream) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return s.open
}

// chunkKey is the id of m's chunk: the tool call id, or "plan".
func chunkKey(m channels.Message) string {
	if m.Kind == channels.KindPlan || m.Key == "" {
		return "plan"
	}
	return m.Key
}

// chunk returns the chunk that shows tool line or plan m: a task_update
// keyed by the tool call id (its first line the title, its status word
// the status, the other lines the details), or a plan_update.
func chunk(m channels.Message) slack.StreamChunk {
	first, rest, _ := strings.Cut(m.Text, "\n")
	if m.Kind == channels.KindPlan {
		return slack.NewPlanUpdateChunk(m.Text)
	}
	c := slack.NewTaskUpdateChunk(chunkKey(m), first)
	c.Status = slack.TaskCardStatusInProgress
	if title, word, ok := cutLast(first, " · "); ok {
		if st, known := taskStatus[word]; known {
			c.Title, c.Status = title, st
		}
	}
	c.Details = strings.TrimSpace(rest)
	return c
}

// taskStatus maps the status word of a tool line (tooldisplay.Summary) to
// a task's status.
var taskStatus = map[string]slack.TaskCardStatus{
	"pending":   slack.TaskCardStatusPending,
	"running":   slack.TaskCardStatusInProgress,
	"done":      slack.TaskCardStatusComplete,
	"failed":    slack.TaskCardStatusError,
	"cancelled": slack.TaskCardStatusError,
}

// cutLast cuts s around the last sep.
func cutLast(s, sep string) (before, after string, ok bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// unpace gives back the post slot pace reserved for channel, when the
// call made nothing visible.
func (a *Adapter) unpace(channel string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if cp := a.posting[channel]; cp != nil {
		cp.next = time.Time{}
	}
}
