package discord

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

func userJSON(u fakeUser) map[string]any {
	return map[string]any{"id": u.ID, "username": u.Name, "global_name": u.Name, "bot": u.Bot}
}

func channelJSON(c *fakeChannel) map[string]any {
	d := map[string]any{"id": c.ID, "type": c.Type, "name": c.Name}
	if c.Guild != "" {
		d["guild_id"] = c.Guild
	}
	if c.Parent != "" {
		d["parent_id"] = c.Parent
	}
	if c.Owner != "" {
		d["owner_id"] = c.Owner
	}
	if c.Type == 11 {
		d["thread_metadata"] = map[string]any{"archived": c.Archived, "auto_archive_duration": 1440, "locked": false}
	}
	return d
}

func messageJSON(m *fakeMessage) map[string]any {
	d := map[string]any{
		"id":         m.ID,
		"channel_id": m.Channel,
		"author":     userJSON(m.Author),
		"content":    m.Content,
		"type":       m.Type,
		"flags":      m.Flags,
		"timestamp":  timestamp(m.Time).Format(time.RFC3339),
	}
	if len(m.Components) > 0 {
		d["components"] = m.Components
	}
	return d
}

// listedJSON is m as a read of its channel lists it (f.mu held): a
// thread's starter message carries the message it points at, null once
// that was deleted, as Discord's does.
func (f *fakeDiscord) listedJSONLocked(m *fakeMessage) map[string]any {
	d := messageJSON(m)
	if m.Type == 21 {
		s := f.msgs[m.Starter]
		d["message_reference"] = map[string]any{"message_id": m.Starter, "channel_id": f.chans[m.Channel].Parent, "guild_id": f.chans[m.Channel].Guild}
		d["referenced_message"] = nil
		if s != nil {
			d["referenced_message"] = messageJSON(s)
		}
	}
	return d
}

// flagsOnCreate are the flags a message may be created with.
const flagsOnCreate = 1<<2 | 1<<12 | 1<<13 | flagComponentsV2 // SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS, IS_VOICE_MESSAGE

// timestamp is t, or now for a message the fake did not date.
func timestamp(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now().UTC()
	}
	return t
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// writeError writes a Discord error body.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// serveAPI is the REST API.
func (f *fakeDiscord) serveAPI(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	h := f.takeHoldLocked(r.Method, strings.TrimPrefix(r.URL.Path, "/api/v9"), body)
	f.mu.Unlock()
	if h != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		answerHeld(h, w, r, func(w http.ResponseWriter) { f.serveAPI(w, r) })
		return
	}
	if f.failDuringOutage(w) {
		return
	}
	path := strings.TrimPrefix(r.URL.Path, "/api/v9")
	f.mu.Lock()
	f.requests = append(f.requests, fakeRequest{Method: r.Method, Path: path, Body: body, At: f.nowLocked()})
	f.changedLocked()
	for _, in := range f.injections {
		if in.n > 0 && in.method == r.Method && strings.Contains(path, in.path) {
			in.n--
			f.mu.Unlock()
			for k, v := range in.header {
				w.Header()[k] = v
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(in.status)
			io.WriteString(w, in.body)
			return
		}
	}
	f.mu.Unlock()
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if segs[0] != "interactions" && segs[0] != "webhooks" && r.Header.Get("Authorization") != f.token {
		writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		return
	}
	if !f.admit(w, r.Method, segs) {
		return
	}
	route := r.Method + " " + segs[0]
	switch {
	case r.Method == "GET" && path == "/gateway":
		writeJSON(w, 200, map[string]any{"url": "ws://" + f.addr + "/gateway"})
	case r.Method == "GET" && path == "/gateway/bot":
		f.serveGatewayBot(w)
	case len(segs) == 3 && route == "POST channels" && segs[2] == "messages":
		payload, files, err := sendPayload(r.Header.Get("Content-Type"), body)
		if err != nil {
			writeError(w, 400, 50109, "The request body contains invalid JSON: "+err.Error())
			return
		}
		f.postMessage(w, segs[1], payload, files...)
	case len(segs) == 4 && route == "PATCH channels" && segs[2] == "messages":
		f.editMessage(w, segs[1], segs[3], body)
	case len(segs) == 3 && route == "POST channels" && segs[2] == "typing":
		f.mu.Lock()
		f.typing[segs[1]] = f.nowLocked()
		f.changedLocked()
		f.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	case len(segs) == 5 && route == "POST channels" && segs[2] == "messages" && segs[4] == "threads":
		f.startThread(w, segs[1], segs[3], body)
	case len(segs) == 2 && route == "GET channels":
		f.mu.Lock()
		c, ok := f.chans[segs[1]]
		var d map[string]any
		if ok {
			d = channelJSON(c)
		}
		f.mu.Unlock()
		if !ok {
			writeError(w, 404, 10003, "Unknown Channel")
			return
		}
		writeJSON(w, 200, d)
	case len(segs) == 3 && route == "GET channels" && segs[2] == "messages":
		f.listMessages(w, segs[1], r.URL.Query())
	case len(segs) == 4 && route == "GET channels" && segs[2] == "messages":
		f.getMessage(w, segs[1], segs[3])
	case len(segs) == 4 && route == "GET guilds" && segs[2] == "members":
		f.member(w, segs[1], segs[3])
	case len(segs) == 2 && route == "PATCH channels":
		f.editChannel(w, segs[1], body)
	case len(segs) == 4 && route == "POST interactions" && segs[3] == "callback":
		f.ack(w, segs[2], body)
	case len(segs) == 7 && (route == "PUT channels" || route == "DELETE channels") && segs[2] == "messages" && segs[4] == "reactions" && segs[6] == "@me":
		f.botReaction(w, r, segs[1], segs[3], segs[5])
	case len(segs) == 3 && route == "POST webhooks":
		f.followup(w, segs[1], segs[2], body)
	case route == "PUT applications" && (len(segs) == 3 && segs[2] == "commands" || len(segs) == 5 && segs[2] == "guilds" && segs[4] == "commands"):
		guild := ""
		if len(segs) == 5 {
			guild = segs[3]
		}
		f.putCommands(w, segs[1], guild, body)
	case len(segs) == 5 && route == "PATCH webhooks" && segs[3] == "messages" && segs[4] == "@original":
		f.editOriginal(w, segs[1], segs[2], body)
	default:
		f.violate("unexpected request %s %s", r.Method, path)
		writeError(w, 404, 0, "404: Not Found")
	}
}

// sendBody is what the fake reads of a message create or edit.
type sendBody struct {
	Content         *string         `json:"content"`
	Components      json.RawMessage `json:"components"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
	} `json:"allowed_mentions"`
	Flags            int `json:"flags"`
	MessageReference *struct {
		MessageID string `json:"message_id"`
	} `json:"message_reference"`
}

func (f *fakeDiscord) checkText(w http.ResponseWriter, s string) bool {
	if n := utf8.RuneCountInString(s); n > 2000 {
		writeError(w, 400, 50035, fmt.Sprintf("Invalid Form Body: content: Must be 2000 or fewer in length (%d)", n))
		return false
	}
	return true
}

// sendPayload returns the JSON of a message create: the body itself, or,
// for a multipart body (a message with files), its payload_json part and
// the files of its files[n] parts, as Discord reads them.
func sendPayload(contentType string, body []byte) ([]byte, []fakeFile, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" {
		return body, nil, nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	var payload []byte
	var files []fakeFile
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, nil, err
		}
		switch name := p.FormName(); {
		case name == "payload_json":
			payload = data
		case strings.HasPrefix(name, "files["):
			files = append(files, fakeFile{Name: p.FileName(), ContentType: p.Header.Get("Content-Type"), Body: data})
		default:
			return nil, nil, fmt.Errorf("unknown form field %q", name)
		}
	}
	if payload == nil {
		return nil, nil, errors.New("no payload_json")
	}
	return payload, files, nil
}

func (f *fakeDiscord) postMessage(w http.ResponseWriter, channel string, body []byte, files ...fakeFile) {
	var b sendBody
	if err := json.Unmarshal(body, &b); err != nil {
		writeError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	content := ""
	if b.Content != nil {
		content = *b.Content
	}
	if content == "" && !hasComponents(b.Components) && len(files) == 0 {
		writeError(w, 400, 50006, "Cannot send an empty message")
		return
	}
	if !f.checkText(w, content) {
		return
	}
	if msg := checkComponents(b.Flags, b.Content, b.Components); msg != "" {
		writeError(w, 400, 50035, msg)
		return
	}
	if b.Flags&^flagsOnCreate != 0 {
		writeError(w, 400, 50035, "Invalid Form Body: flags: a message cannot be created with these flags")
		return
	}
	for _, file := range files {
		if len(file.Body) > 10<<20 {
			writeError(w, 413, 40005, "Request entity too large")
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.chans[channel]
	if !ok {
		writeError(w, 404, 10003, "Unknown Channel")
		return
	}
	if ch.Archived {
		ch.Archived = false // a post unarchives the thread
		f.dispatchLocked("THREAD_UPDATE", channelJSON(ch))
	}
	delete(f.typing, channel) // a post hides its author's typing indicator
	m := &fakeMessage{ID: f.newIDLocked(), Channel: channel, Author: f.bot, Content: content, Flags: b.Flags, History: []string{content}, Files: files, Posted: f.nowLocked()}
	if r := b.MessageReference; r != nil {
		if to, ok := f.msgs[r.MessageID]; !ok || to.Channel != channel {
			writeError(w, 400, 50035, "Invalid Form Body: message_reference: Unknown message")
			return
		}
		m.ReplyTo = r.MessageID
	}
	if hasComponents(b.Components) {
		m.Components = b.Components
	}
	f.msgs[m.ID] = m
	d := messageJSON(m)
	if ch.Guild != "" {
		d["guild_id"] = ch.Guild
	}
	f.dispatchLocked("MESSAGE_CREATE", d) // the bot sees its own messages
	f.changedLocked()
	writeJSON(w, 200, messageJSON(m))
}

func hasComponents(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s != "" && s != "null" && s != "[]"
}

func (f *fakeDiscord) editMessage(w http.ResponseWriter, channel, id string, body []byte) {
	var b sendBody
	if err := json.Unmarshal(body, &b); err != nil {
		writeError(w, 400, 50109, "The request body contains invalid JSON.")
		return
	}
	if b.Content != nil && !f.checkText(w, *b.Content) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.chans[channel]
	if !ok {
		writeError(w, 404, 10003, "Unknown Channel")
		return
	}
	if ch.Archived {
		writeError(w, 400, 50083, "Thread is archived")
		return
	}
	m, ok := f.msgs[id]
	if !ok || m.Channel != channel {
		writeError(w, 404, 10008, "Unknown Message")
		return
	}
	if m.Author.ID != f.bot.ID {
		writeError(w, 403, 50005, "Cannot edit a message authored by another user")
		return
	}
	// A Components V2 message stays one: its flag cannot be removed
	// (an edit without flags keeps them), nor added to a classic one.
	flags := m.Flags
	if b.Flags != 0 {
		if b.Flags&flagComponentsV2 != m.Flags&flagComponentsV2 {
			writeError(w, 400, 50035, "Invalid Form Body: flags: IS_COMPONENTS_V2 cannot be changed")
			return
		}
		flags = b.Flags
	}
	if msg := checkComponents(flags, b.Content, b.Components); msg != "" {
		writeError(w, 400, 50035, msg)
		return
	}
	if b.Content != nil {
		m.Content = *b.Content
		m.History = append(m.History, m.Content)
	}
	if b.Components != nil {
		if hasComponents(b.Components) {
			m.Components = b.Components
		} else {
			m.Components = nil
		}
	}
	for _, in := range f.interactions {
		if in.Message == id && in.First == "" {
			in.First = "edit"
			f.violations = append(f.violations, fmt.Sprintf("message %s edited before the click on it (interaction %s) was acknowledged", id, in.ID))
		}
	}
	m.Edits++
	f.changedLocked()
	writeJSON(w, 200, messageJSON(m))
}

func (f *fakeDiscord) startThread(w http.ResponseWriter, channel, msg string, body []byte) {
	var b struct {
		Name string `json:"name"`
	}
	json.Unmarshal(body, &b)
	if n := utf8.RuneCountInString(b.Name); n < 1 || n > 100 {
		writeError(w, 400, 50035, "Invalid Form Body: name")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.chans[channel]
	if !ok {
		writeError(w, 404, 10003, "Unknown Channel")
		return
	}
	if ch.Type != 0 && ch.Type != 5 {
		writeError(w, 400, 50024, "Cannot execute action on this channel type")
		return
	}
	if m, ok := f.msgs[msg]; !ok || m.Channel != channel {
		writeError(w, 404, 10008, "Unknown Message")
		return
	}
	if _, ok := f.chans[msg]; ok {
		writeError(w, 400, 160004, "A thread has already been created for this message")
		return
	}
	// A thread started from a message has the message's id.
	th := &fakeChannel{ID: msg, Type: 11, Guild: ch.Guild, Parent: channel, Owner: f.bot.ID, Name: b.Name}
	f.chans[th.ID] = th
	d := channelJSON(th)
	d["newly_created"] = true
	f.dispatchLocked("THREAD_CREATE", d)
	f.changedLocked()
	writeJSON(w, 201, channelJSON(th))
}

func (f *fakeDiscord) editChannel(w http.ResponseWriter, id string, body []byte) {
	var b struct {
		Name *string `json:"name"`
	}
	json.Unmarshal(body, &b)
	f.mu.Lock()
	defer f.mu.Unlock()
	ch, ok := f.chans[id]
	if !ok {
		writeError(w, 404, 10003, "Unknown Channel")
		return
	}
	if b.Name != nil {
		if n := utf8.RuneCountInString(*b.Name); n < 1 || n > 100 {
			writeError(w, 400, 50035, "Invalid Form Body: name")
			return
		}
		ch.Name = *b.Name
	}
	f.dispatchLocked("THREAD_UPDATE", channelJSON(ch))
	f.changedLocked()
	writeJSON(w, 200, channelJSON(ch))
}

func (f *fakeDiscord) ack(w http.ResponseWriter, token string, body []byte) {
	var b struct {
		Type int `json:"type"`
	}
	json.Unmarshal(body, &b)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.interactions[token]
	if !ok {
		writeError(w, 404, 10062, "Unknown interaction")
		return
	}
	if in.First == "" {
		in.First = "ack"
	}
	if !in.Acked.IsZero() {
		writeError(w, 400, 40060, "Interaction has already been acknowledged.")
		return
	}
	if time.Since(in.Sent) > 3*time.Second {
		f.violations = append(f.violations, fmt.Sprintf("interaction %s acknowledged after %v", in.ID, time.Since(in.Sent)))
		writeError(w, 404, 10062, "Unknown interaction")
		return
	}
	if b.Type == 9 {
		if msg := checkModal(body); msg != "" {
			writeError(w, 400, 50035, msg)
			return
		}
	}
	in.Acked = time.Now()
	in.AckType = b.Type
	in.AckBody = body
	f.changedLocked()
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeDiscord) followup(w http.ResponseWriter, app, token string, body []byte) {
	var b sendBody
	json.Unmarshal(body, &b)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.interactions[token]
	if !ok || app != f.app {
		writeError(w, 404, 10015, "Unknown Webhook")
		return
	}
	if in.First == "" {
		in.First = "followup"
	}
	if in.Acked.IsZero() {
		f.violations = append(f.violations, fmt.Sprintf("follow-up to interaction %s before its acknowledgement", in.ID))
		writeError(w, 404, 10015, "Unknown Webhook")
		return
	}
	content := ""
	if b.Content != nil {
		content = *b.Content
	}
	f.followups = append(f.followups, fakeFollowup{Token: token, Content: content, Flags: b.Flags, Body: body})
	m := &fakeMessage{ID: f.newIDLocked(), Author: f.bot, Content: content, Flags: b.Flags}
	f.changedLocked()
	writeJSON(w, 200, messageJSON(m))
}
