package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The fake's Socket Mode side: the websocket, envelopes of events and
// clicks, disconnects and acknowledgements.

// fakeConn is one Socket Mode websocket.
type fakeConn struct {
	ws *websocket.Conn
	mu sync.Mutex // serialises writes
}

func (c *fakeConn) write(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ws.WriteJSON(v)
}

func (f *fakeSlack) serveSocket(w http.ResponseWriter, r *http.Request) {
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &fakeConn{ws: ws}
	defer ws.Close()
	if err := c.write(map[string]any{"type": "hello", "num_connections": 1,
		"debug_info": map[string]any{"host": "fake"}, "connection_info": map[string]any{"app_id": f.appID}}); err != nil {
		return
	}
	f.mu.Lock()
	f.conn = c
	f.sockets.open = append(f.sockets.open, c)
	f.notifyLocked()
	f.mu.Unlock()

	// Slack pings; slack-go reconnects when it hears no ping for 30 s.
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				c.mu.Lock()
				err := ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second))
				c.mu.Unlock()
				if err != nil {
					return
				}
			}
		}
	})
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			break
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) == nil && ack.EnvelopeID != "" {
			f.mu.Lock()
			if f.holdAckLocked(c, ack.EnvelopeID) {
				f.mu.Unlock()
				continue
			}
			if _, dup := f.acks[ack.EnvelopeID]; !dup {
				f.acks[ack.EnvelopeID] = time.Now()
				if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
					f.ackPayloads[ack.EnvelopeID] = ack.Payload
				}
			}
			f.notifyLocked()
			f.mu.Unlock()
		}
	}
	close(done)
	wg.Wait()
	f.mu.Lock()
	f.closedLocked(c)
	f.notifyLocked()
	f.mu.Unlock()
}

// closedLocked forgets the closed connection c: the latest connection is
// then the newest still open, if any (another edge's, when several share
// the app).
func (f *fakeSlack) closedLocked(c *fakeConn) {
	f.sockets.open = slices.DeleteFunc(f.sockets.open, func(o *fakeConn) bool { return o == c })
	if f.conn == c {
		f.conn = nil
		if n := len(f.sockets.open); n > 0 {
			f.conn = f.sockets.open[n-1]
		}
	}
}

// connected waits until a Socket Mode connection is open and returns it.
func (f *fakeSlack) connected(ctx context.Context) (*fakeConn, error) {
	var c *fakeConn
	err := f.waitFor(ctx, "a socket mode connection", func() bool {
		c = f.conn
		return c != nil
	})
	return c, err
}

// send writes an envelope once a connection is open, trying the next
// connection when a write fails (as Slack redelivers).
func (f *fakeSlack) send(ctx context.Context, env map[string]any) error {
	if f.sink != nil {
		f.sink(env)
		return nil
	}
	for {
		c, err := f.connected(ctx)
		if err != nil {
			return err
		}
		c = f.pickSocket(c, env)
		if err := c.write(env); err == nil {
			return nil
		}
		f.mu.Lock()
		f.closedLocked(c)
		f.mu.Unlock()
	}
}

// echo sends an event about the app's own message to the open connection,
// if any, as Slack does.
func (f *fakeSlack) echo(ev map[string]any) {
	if f.o.noEcho {
		return
	}
	f.mu.Lock()
	c := f.conn
	env := f.eventEnvelopeLocked(ev, "", 0)
	f.mu.Unlock()
	if c != nil {
		_ = c.write(env)
	}
}

// eventEnvelopeLocked wraps an inner event in an event_callback and a
// Socket Mode envelope. An empty eventID gets a new one.
func (f *fakeSlack) eventEnvelopeLocked(ev map[string]any, eventID string, retry int) map[string]any {
	if eventID == "" {
		eventID = fmt.Sprintf("Ev%06d", f.nextLocked())
	}
	field := func(k string) string { v, _ := ev[k].(string); return v }
	f.eventThreads = append(f.eventThreads, eventThread{channel: field("channel"), kind: field("channel_type"), thread: firstNonEmpty(field("thread_ts"), field("ts"))})
	env := fmt.Sprintf("env-%06d", f.nextLocked())
	payload := map[string]any{
		"token": "verification-token", "team_id": f.team, "api_app_id": f.appID, "event": ev,
		"type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(),
		"authorizations":        []map[string]any{{"team_id": f.team, "user_id": f.botUser, "is_bot": true}},
		"is_ext_shared_channel": false, "event_context": "4-fake",
	}
	reason := ""
	if retry > 0 {
		reason = "timeout"
	}
	return map[string]any{"envelope_id": env, "type": "events_api", "accepts_response_payload": false,
		"retry_attempt": retry, "retry_reason": reason, "payload": payload}
}

// threadsSince returns the threads of the events sent after the first n,
// each once, in order.
func (f *fakeSlack) threadsSince(n int) []eventThread {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []eventThread
	for _, t := range f.eventThreads[n:] {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// eventCount returns how many events were sent.
func (f *fakeSlack) eventCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.eventThreads)
}

// sent is what a person's message produced: its ts and the envelopes
// and event ids that carried it.
type sent struct {
	ts        string
	envelopes []string
	eventIDs  []string
	raw       []map[string]any // the envelopes, for redelivery
}

// sayOptions describe a message a person writes.
type sayOptions struct {
	user    string
	channel string // default fakeChannel
	thread  string // "" for a top-level message
	text    string
	mention bool   // prefix "<@bot> " and send app_mention too
	kind    string // channel_type; default "channel"
	botID   string // set for a message from another bot
	files   []fakeFile
}

// fakeFile is a file shared with a message; the fake serves it at its
// url_private_download to requests with the bot token, and a sign-in page
// to others, as Slack does.
type fakeFile struct {
	name, mimetype, mode string
	body                 []byte
}

// say has a person write a message: Slack sends a message event and, for
// a mention, an app_mention event with the same ts.
func (f *fakeSlack) say(ctx context.Context, o sayOptions) (sent, error) {
	if o.channel == "" {
		o.channel = fakeChannel
	}
	if o.kind == "" {
		o.kind = "channel"
	}
	text := o.text
	if o.mention {
		text = "<@" + f.botUser + "> " + text
	}
	f.mu.Lock()
	ts := f.newTSLocked()
	f.msgs[o.channel+"/"+ts] = &fakeMessage{Channel: o.channel, TS: ts, ThreadTS: o.thread, Text: text, User: o.user, BotID: o.botID}
	base := map[string]any{"user": o.user, "text": text, "ts": ts, "channel": o.channel, "event_ts": ts, "team": f.team,
		"blocks": []any{}, "client_msg_id": fmt.Sprintf("cm-%s", ts)}
	if o.thread != "" {
		base["thread_ts"] = o.thread
	}
	if len(o.files) > 0 {
		var fs []any
		for _, file := range o.files {
			id := fmt.Sprintf("F%d", f.nextLocked())
			path := "/files-pri/" + f.team + "-" + id + "/download/" + file.name
			f.files[path] = file
			mode := file.mode
			if mode == "" {
				mode = "hosted"
			}
			fs = append(fs, map[string]any{
				"id": id, "name": file.name, "title": file.name, "mimetype": file.mimetype, "size": len(file.body), "mode": mode,
				"url_private":          f.srvURL() + "/files-pri/" + f.team + "-" + id + "/" + file.name,
				"url_private_download": f.srvURL() + path,
				"permalink":            "https://fake.slack.com/files/" + id,
			})
		}
		base["files"] = fs
		base["subtype"] = "file_share"
	}
	if o.botID != "" {
		base["bot_id"] = o.botID
		base["subtype"] = "bot_message"
		base["bot_profile"] = map[string]any{"id": o.botID, "name": "Other bot", "app_id": "A0OTHER"}
	}
	msg := map[string]any{"type": "message", "channel_type": o.kind}
	mention := map[string]any{"type": "app_mention"}
	for k, v := range base {
		msg[k], mention[k] = v, v
	}
	var evs []map[string]any
	if o.mention && f.o.mentionFirst {
		evs = []map[string]any{mention, msg}
	} else if o.mention {
		evs = []map[string]any{msg, mention}
	} else {
		evs = []map[string]any{msg}
	}
	out := sent{ts: ts}
	for _, ev := range evs {
		env := f.eventEnvelopeLocked(ev, "", 0)
		out.raw = append(out.raw, env)
		out.envelopes = append(out.envelopes, env["envelope_id"].(string))
		out.eventIDs = append(out.eventIDs, env["payload"].(map[string]any)["event_id"].(string))
	}
	f.notifyLocked()
	f.mu.Unlock()
	for _, env := range out.raw {
		if err := f.send(ctx, env); err != nil {
			return out, err
		}
	}
	return out, nil
}

// mustSay is say that fails the test on an error.
func (f *fakeSlack) mustSay(ctx context.Context, o sayOptions) sent {
	f.t.Helper()
	s, err := f.say(ctx, o)
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

// mustRedeliver is redeliver that fails the test on an error.
func (f *fakeSlack) mustRedeliver(ctx context.Context, env map[string]any, n int) {
	f.t.Helper()
	if _, err := f.redeliver(ctx, env, n); err != nil {
		f.t.Fatal(err)
	}
}

// redeliver sends an envelope again as Slack's retry: same event id, a new
// envelope id, retry_attempt n.
func (f *fakeSlack) redeliver(ctx context.Context, env map[string]any, n int) (string, error) {
	payload := env["payload"].(map[string]any)
	f.mu.Lock()
	again := f.eventEnvelopeLocked(payload["event"].(map[string]any), payload["event_id"].(string), n)
	f.mu.Unlock()
	return again["envelope_id"].(string), f.send(ctx, again)
}

// click has user press the button of option on message ts, or pick it
// in a select menu, as Slack sends it: an interactive envelope with a
// block_actions payload. It fails
// when the message has no such button (it was never shown, or removed).
func (f *fakeSlack) click(ctx context.Context, user, channel, ts, option string) (string, error) {
	f.mu.Lock()
	m, ok := f.msgs[channel+"/"+ts]
	if !ok {
		f.mu.Unlock()
		return "", fmt.Errorf("fake slack: no message %s", ts)
	}
	var blocks []struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
			Options []struct {
				Value string          `json:"value"`
				Text  json.RawMessage `json:"text"`
			} `json:"options"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(m.Blocks, &blocks)
	var action map[string]any
	for _, b := range blocks {
		for _, e := range b.Elements {
			if b.Type == "actions" && e.Type == "button" && e.Value == option {
				action = map[string]any{"action_id": e.ActionID, "block_id": b.BlockID, "value": e.Value, "type": "button",
					"text":      map[string]any{"type": "plain_text", "text": e.Text.Text, "emoji": true},
					"action_ts": fmt.Sprintf("1700000200.%06d", f.nextLocked())}
			}
			if b.Type == "actions" && e.Type == "static_select" {
				if len(e.Options) > 100 {
					f.mu.Unlock()
					return "", fmt.Errorf("fake slack: message %s has a select of %d options (at most 100)", ts, len(e.Options))
				}
				for _, o := range e.Options {
					if o.Value == option {
						action = map[string]any{"action_id": e.ActionID, "block_id": b.BlockID, "type": "static_select",
							"selected_option": map[string]any{"value": o.Value, "text": o.Text},
							"action_ts":       fmt.Sprintf("1700000200.%06d", f.nextLocked())}
					}
				}
			}
		}
	}
	if action == nil {
		f.mu.Unlock()
		return "", fmt.Errorf("fake slack: message %s has no button %q", ts, option)
	}
	name := f.users[user]
	env := fmt.Sprintf("env-%06d", f.nextLocked())
	f.triggers["trigger-"+env] = user
	payload := map[string]any{
		"type":       "block_actions",
		"user":       map[string]any{"id": user, "username": strings.ToLower(name), "name": strings.ToLower(name), "team_id": f.team},
		"api_app_id": f.appID, "token": "verification-token",
		"container":  map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false, "thread_ts": m.ThreadTS},
		"trigger_id": "trigger-" + env,
		"team":       map[string]any{"id": f.team, "domain": "fake"},
		"channel":    map[string]any{"id": channel, "name": "general"},
		"message": map[string]any{"type": "message", "user": m.User, "bot_id": m.BotID, "text": m.Text, "ts": m.TS,
			"thread_ts": m.ThreadTS, "blocks": json.RawMessage(m.Blocks)},
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": "https://hooks.slack.invalid/actions/" + env,
		"actions":      []any{action},
	}
	f.mu.Unlock()
	return env, f.send(ctx, map[string]any{"envelope_id": env, "type": "interactive", "accepts_response_payload": false, "payload": payload})
}

// disconnect asks the client to reconnect, as Slack does before it
// rotates connections.
func (f *fakeSlack) disconnect(ctx context.Context) error {
	c, err := f.connected(ctx)
	if err != nil {
		return err
	}
	return c.write(map[string]any{"type": "disconnect", "reason": "refresh_requested", "debug_info": map[string]any{"host": "fake"}})
}

// drop closes the current connection without a word.
func (f *fakeSlack) drop() {
	f.mu.Lock()
	c := f.conn
	if c != nil {
		f.closedLocked(c)
	}
	f.notifyLocked()
	f.mu.Unlock()
	if c != nil {
		_ = c.ws.NetConn().Close()
	}
}

// openCount returns how many connections were opened.
func (f *fakeSlack) openCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.opens
}

// acked reports whether envelope id was acknowledged.
func (f *fakeSlack) acked(id string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.acks[id]
	return ok
}

// waitAck waits until envelope id is acknowledged.
func (f *fakeSlack) waitAck(ctx context.Context, id string) error {
	return f.waitFor(ctx, "the ack of "+id, func() bool { _, ok := f.acks[id]; return ok })
}

// slash has user give the app's slash command with text in channel, as
// Slack sends it over Socket Mode: a slash_commands envelope.
func (f *fakeSlack) slash(ctx context.Context, user, channel, command, text string) (string, error) {
	f.mu.Lock()
	env := fmt.Sprintf("env-%06d", f.nextLocked())
	name := f.users[user]
	payload := map[string]any{
		"token": "verification-token", "team_id": f.team, "team_domain": "fake", "channel_id": channel, "channel_name": "general",
		"user_id": user, "user_name": strings.ToLower(name), "command": command, "text": text, "api_app_id": f.appID,
		"is_enterprise_install": "false", "response_url": "https://hooks.slack.invalid/commands/" + env, "trigger_id": "trigger-" + env,
	}
	f.mu.Unlock()
	return env, f.send(ctx, map[string]any{"envelope_id": env, "type": "slash_commands", "accepts_response_payload": true, "payload": payload})
}

// ackPayload returns the payload envelope id was acknowledged with, nil
// for none.
func (f *fakeSlack) ackPayload(id string) json.RawMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ackPayloads[id]
}

// openedViews returns the modals the app opened.
func (f *fakeSlack) openedViews() []fakeView {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.views)
}

// submitView has the person whose modal view is submit it with answers
// by the label of each input block, as Slack sends it: a view_submission
// payload whose state holds each element's value in its type's shape (a
// multi-select's answer is option values separated by commas; a
// checkbox's "true" checks it). Unanswered blocks have no value.
func (f *fakeSlack) submitView(ctx context.Context, v fakeView, answers map[string]string) (string, error) {
	return f.sendView(ctx, v, "view_submission", answers)
}

// closeView has the person close modal v, as Slack sends it with
// notify_on_close: a view_closed payload.
func (f *fakeSlack) closeView(ctx context.Context, v fakeView) (string, error) {
	return f.sendView(ctx, v, "view_closed", nil)
}

func (f *fakeSlack) sendView(ctx context.Context, v fakeView, kind string, answers map[string]string) (string, error) {
	var view struct {
		CallbackID      string `json:"callback_id"`
		PrivateMetadata string `json:"private_metadata"`
		Blocks          []struct {
			Type    string `json:"type"`
			BlockID string `json:"block_id"`
			Label   struct {
				Text string `json:"text"`
			} `json:"label"`
			Element struct {
				Type     string `json:"type"`
				ActionID string `json:"action_id"`
			} `json:"element"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(v.View, &view); err != nil {
		return "", err
	}
	values := map[string]any{}
	for _, b := range view.Blocks {
		if b.Type != "input" {
			continue
		}
		ans, ok := answers[b.Label.Text]
		st := map[string]any{"type": b.Element.Type}
		switch b.Element.Type {
		case "static_select":
			st["selected_option"] = nil
			if ok {
				st["selected_option"] = map[string]any{"value": ans, "text": map[string]any{"type": "plain_text", "text": ans}}
			}
		case "multi_static_select", "checkboxes":
			sel := []any{}
			for a := range strings.SplitSeq(ans, ",") {
				if ok && a != "" && (b.Element.Type != "checkboxes" || a == "true") {
					sel = append(sel, map[string]any{"value": a})
				}
			}
			st["selected_options"] = sel
		default:
			st["value"] = nil
			if ok {
				st["value"] = ans
			}
		}
		values[b.BlockID] = map[string]any{b.Element.ActionID: st}
	}
	f.mu.Lock()
	env := fmt.Sprintf("env-%06d", f.nextLocked())
	name := f.users[v.User]
	f.mu.Unlock()
	payload := map[string]any{
		"type": kind, "team": map[string]any{"id": f.team, "domain": "fake"},
		"user":       map[string]any{"id": v.User, "username": strings.ToLower(name), "name": strings.ToLower(name), "team_id": f.team},
		"api_app_id": f.appID, "token": "verification-token", "trigger_id": "trigger-" + env,
		"view": map[string]any{"id": v.ID, "hash": "h-" + v.ID + "-" + env, "type": "modal", "callback_id": view.CallbackID,
			"private_metadata": view.PrivateMetadata, "state": map[string]any{"values": values}, "blocks": view.Blocks},
	}
	if kind == "view_closed" {
		payload["is_cleared"] = false
	}
	return env, f.send(ctx, map[string]any{"envelope_id": env, "type": "interactive", "accepts_response_payload": true, "payload": payload})
}

// react has user add (or remove) the reaction name on message ts of
// channel, as Slack sends it: a reaction_added (reaction_removed) event
// that names the message only by its channel and ts.
func (f *fakeSlack) react(ctx context.Context, user, channel, ts, name string, removed bool) error {
	_, err := f.reactEnvelope(ctx, user, channel, ts, name, removed)
	return err
}

// reactEnvelope is react returning the envelope sent, for a redelivery.
func (f *fakeSlack) reactEnvelope(ctx context.Context, user, channel, ts, name string, removed bool) (map[string]any, error) {
	kind := "reaction_added"
	if removed {
		kind = "reaction_removed"
	}
	f.mu.Lock()
	itemUser := ""
	if m, ok := f.msgs[channel+"/"+ts]; ok {
		itemUser = m.User
	}
	now := fmt.Sprintf("1700000300.%06d", f.nextLocked())
	env := f.eventEnvelopeLocked(map[string]any{"type": kind, "user": user, "reaction": name, "item_user": itemUser,
		"item": map[string]any{"type": "message", "channel": channel, "ts": ts}, "event_ts": now}, "", 0)
	f.mu.Unlock()
	return env, f.send(ctx, env)
}
