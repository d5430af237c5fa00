package slack

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// maxFakeReplies is how many messages conversations.replies returns at
// most to an app outside the Marketplace.
const maxFakeReplies = 15

// replies is conversations.replies as Slack answers an app outside the
// Marketplace: the thread's parent first, then its replies after oldest
// (exclusive unless inclusive=1), oldest first, at most 15, with
// has_more.
func (f *fakeSlack) replies(w http.ResponseWriter, form url.Values) {
	ch, ts, oldest := form.Get("channel"), form.Get("ts"), form.Get("oldest")
	limit := 100
	if s := form.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_limit"})
			return
		}
		limit = n
	}
	limit = min(limit, maxFakeReplies)
	inclusive := form.Get("inclusive") == "1" || form.Get("inclusive") == "true"
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.channels[ch] {
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	parent, ok := f.msgs[ch+"/"+ts]
	if !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "thread_not_found"})
		return
	}
	var rs []fakeMessage
	for _, m := range f.msgs {
		if m.Channel != ch || m.ThreadTS != ts || m.TS == ts {
			continue
		}
		if oldest != "" && (m.TS < oldest || (m.TS == oldest && !inclusive)) {
			continue
		}
		rs = append(rs, *m)
	}
	sortByTS(rs)
	more := len(rs) > limit-1
	if more {
		rs = rs[:limit-1]
	}
	withMeta := form.Get("include_all_metadata") == "1" || form.Get("include_all_metadata") == "true"
	out := []map[string]any{fakeReplyJSON(*parent, ts, withMeta)}
	for _, m := range rs {
		out = append(out, fakeReplyJSON(m, ts, withMeta))
	}
	writeJSON(w, map[string]any{"ok": true, "messages": out, "has_more": more,
		"response_metadata": map[string]any{"next_cursor": fmt.Sprint(more)}})
}

// fakeReplyJSON renders a message as conversations.replies lists it, its
// metadata only when asked for (include_all_metadata).
func fakeReplyJSON(m fakeMessage, thread string, withMeta bool) map[string]any {
	d := map[string]any{"type": "message", "user": m.User, "text": m.Text, "ts": m.TS, "thread_ts": thread}
	if withMeta && m.Metadata != nil {
		d["metadata"] = m.Metadata
	}
	if m.BotID != "" {
		d["bot_id"] = m.BotID
	}
	if len(m.Blocks) > 0 {
		d["blocks"] = m.Blocks
	}
	return d
}

// sayWhileDown has a person write text in thread while the gateway is
// down: the message is kept, and its event is not sent; the envelope is
// returned in sent.raw, for a later redelivery.
func (f *fakeSlack) sayWhileDown(user, thread, text string) sent {
	f.mu.Lock()
	defer f.mu.Unlock()
	ts := f.newTSLocked()
	f.msgs[fakeChannel+"/"+ts] = &fakeMessage{Channel: fakeChannel, TS: ts, ThreadTS: thread, Text: text, User: user}
	ev := map[string]any{"type": "message", "channel_type": "channel", "user": user, "text": text, "ts": ts,
		"thread_ts": thread, "channel": fakeChannel, "event_ts": ts, "team": f.team, "blocks": []any{},
		"client_msg_id": "cm-" + ts}
	env := f.eventEnvelopeLocked(ev, "", 0)
	f.notifyLocked()
	return sent{ts: ts, envelopes: []string{env["envelope_id"].(string)},
		eventIDs: []string{env["payload"].(map[string]any)["event_id"].(string)}, raw: []map[string]any{env}}
}

// fakeMetadata reads the metadata argument of chat.postMessage or
// chat.update: "" for none, else an object with an event_type and an
// event_payload object, or Slack's error.
func fakeMetadata(form url.Values) (json.RawMessage, string) {
	s := form.Get("metadata")
	if s == "" {
		return nil, ""
	}
	var md struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if err := json.Unmarshal([]byte(s), &md); err != nil {
		return nil, "invalid_metadata_format"
	}
	if md.EventType == "" || md.EventPayload == nil {
		return nil, "invalid_metadata_schema"
	}
	return json.RawMessage(s), ""
}
