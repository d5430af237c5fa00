package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"unicode/utf8"
)

// fakeStreams is the fake's side of chat.startStream, appendStream and
// stopStream: the streamed messages, and the expiry of streams at random
// points (seeded) or past a size limit, as Slack closes them.
type fakeStreams struct {
	// expire, if set, closes a stream before an appendStream with
	// probability expireP: the call answers message_not_in_streaming_state.
	expire  *rand.Rand
	expireP float64
	// limit is the longest streamed Markdown; an append past it answers
	// msg_too_long and closes the stream. 0 means no limit.
	limit int
}

// fakeTask is a task card of a streamed message.
type fakeTask struct {
	Title, Status, Details string
}

// fakeStream is the streamed state of a fake message.
type fakeStream struct {
	streaming bool
	tasks     map[string]fakeTask
	taskOrder []string
	plan      string
	recipient [2]string // user, team
	expired   bool      // closed by the fake, not by the app
}

// serveStream answers the stream methods; it reports false for other
// methods.
func (f *fakeSlack) serveStream(w http.ResponseWriter, method string, form url.Values) bool {
	switch method {
	case "chat.startStream", "chat.appendStream", "chat.stopStream":
	case "agents.sessions.setStatus":
		f.setSessionStatus(w, form)
		return true
	case "agents.sessions.rename":
		f.mu.Lock()
		defer f.mu.Unlock()
		switch {
		case !f.o.streams:
			writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
		case !f.channels[form.Get("channel_id")]:
			writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		default:
			if f.titles == nil {
				f.titles = map[string]string{}
			}
			f.titles[form.Get("channel_id")+"/"+form.Get("thread_ts")] = form.Get("title")
			f.notifyLocked()
			writeJSON(w, map[string]any{"ok": true})
		}
		return true
	default:
		return false
	}
	if !f.o.streams {
		writeJSON(w, map[string]any{"ok": false, "error": "unknown_method"})
		return true
	}
	ch := form.Get("channel")
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.channels[ch] {
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return true
	}
	var chunks []map[string]string
	if c := form.Get("chunks"); c != "" {
		if err := json.Unmarshal([]byte(c), &chunks); err != nil {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_chunks"})
			return true
		}
	}
	md := form.Get("markdown_text")
	var m *fakeMessage
	switch method {
	case "chat.startStream":
		if form.Get("thread_ts") == "" {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_arguments"})
			return true
		}
		m = &fakeMessage{Channel: ch, TS: f.newTSLocked(), ThreadTS: form.Get("thread_ts"), User: f.botUser, BotID: f.botID, Markdown: true,
			Stream: &fakeStream{streaming: true, tasks: map[string]fakeTask{}, recipient: [2]string{form.Get("recipient_user_id"), form.Get("recipient_team_id")}}}
		f.msgs[ch+"/"+m.TS] = m
		delete(f.status, ch+"/"+m.ThreadTS)
	default:
		var ok bool
		m, ok = f.msgs[ch+"/"+form.Get("ts")]
		if !ok || m.Stream == nil {
			writeJSON(w, map[string]any{"ok": false, "error": "message_not_found"})
			return true
		}
		if method == "chat.appendStream" && m.Stream.streaming && f.o.stream.expire != nil && f.o.stream.expire.Float64() < f.o.stream.expireP {
			m.Stream.streaming, m.Stream.expired = false, true
		}
		if !m.Stream.streaming {
			writeJSON(w, map[string]any{"ok": false, "error": "message_not_in_streaming_state"})
			return true
		}
		if method == "chat.appendStream" && f.o.stream.limit > 0 && utf8.RuneCountInString(m.Text+md) > f.o.stream.limit {
			m.Stream.streaming, m.Stream.expired = false, true
			writeJSON(w, map[string]any{"ok": false, "error": "msg_too_long"})
			return true
		}
		if method == "chat.stopStream" {
			m.Stream.streaming = false
		}
	}
	m.Text += md
	for _, c := range chunks {
		switch c["type"] {
		case "task_update":
			id := c["id"]
			if _, seen := m.Stream.tasks[id]; !seen {
				m.Stream.taskOrder = append(m.Stream.taskOrder, id)
			}
			m.Stream.tasks[id] = fakeTask{Title: c["title"], Status: c["status"], Details: c["details"]}
		case "plan_update":
			m.Stream.plan = c["title"]
		case "markdown_text":
			m.Text += c["text"]
		}
	}
	f.notifyLocked()
	writeJSON(w, map[string]any{"ok": true, "channel": ch, "ts": m.TS})
	return true
}

// streamOf returns a copy of the streamed state of message ch/ts.
func (f *fakeSlack) streamOf(ch, ts string) (fakeStream, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, ok := f.msgs[ch+"/"+ts]
	if !ok || m.Stream == nil {
		return fakeStream{}, false
	}
	s := *m.Stream
	return s, true
}

// seenChunk returns what a person sees of the task card key (or the plan)
// of streamed message ts: its title, " · " and its status as a word, then
// its details.
func (f *fakeSlack) seenChunk(channel, ts, key string) (string, error) {
	st, ok := f.streamOf(channel, ts)
	if !ok {
		return "", fmt.Errorf("fake slack: no streamed message %s in %s", ts, channel)
	}
	if key == "plan" {
		return st.plan, nil
	}
	tk, ok := st.tasks[key]
	if !ok {
		return "", fmt.Errorf("fake slack: no task %s in %s", key, ts)
	}
	words := map[string]string{"pending": "pending", "in_progress": "running", "complete": "done", "error": "failed"}
	out := tk.Title + " · " + words[tk.Status]
	if tk.Details != "" {
		out += "\n" + tk.Details
	}
	return out, nil
}

// stopButton has user press Stop on the agent session of thread: Slack
// stops the app's open streams there and sends agent_session_stopped.
func (f *fakeSlack) stopButton(ctx context.Context, user, channel, thread string) error {
	f.mu.Lock()
	stopped := []string{}
	for _, m := range f.msgs {
		if m.Channel == channel && m.ThreadTS == thread && m.Stream != nil && m.Stream.streaming {
			m.Stream.streaming = false
			stopped = append(stopped, m.TS)
		}
	}
	ts := f.newTSLocked()
	env := f.eventEnvelopeLocked(map[string]any{"type": "agent_session_stopped", "channel": channel, "thread_ts": thread,
		"user": user, "event_ts": ts, "streaming_message_ts": stopped}, "", 0)
	f.notifyLocked()
	f.mu.Unlock()
	return f.send(ctx, env)
}
