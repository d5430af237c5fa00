package slack

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The fake's side of files the app uploads, as Slack does it:
// files.getUploadURLExternal names an upload URL and a file id, the app
// POSTs the bytes there, and files.completeUploadExternal shares the file
// in a channel (a thread with thread_ts), with an initial comment.

func (f *fakeSlack) getUploadURL(w http.ResponseWriter, form url.Values) {
	name := form.Get("filename")
	n, err := strconv.Atoi(form.Get("length"))
	switch {
	case name == "":
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	case err != nil || n <= 0:
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_length"})
		return
	}
	f.mu.Lock()
	id := fmt.Sprintf("F%06d", f.nextLocked())
	f.uploads[id] = &fakeUpload{ID: id, Name: name, Length: n}
	f.mu.Unlock()
	writeJSON(w, map[string]any{"ok": true, "upload_url": f.srvURL() + "/upload/" + id, "file_id": id})
}

// serveUpload takes a file's bytes at its upload URL: a multipart form
// with the file in one part (or the raw body). Slack answers 200 with a
// short text.
func (f *fakeSlack) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/")
	if f.failDuringOutage(w) {
		return
	}
	var name, ctype string
	var body []byte
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "multipart/form-data" {
		mr := multipart.NewReader(r.Body, params["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				http.Error(w, "bad multipart body", http.StatusBadRequest)
				return
			}
			data, err := io.ReadAll(p)
			if err != nil {
				http.Error(w, "bad multipart body", http.StatusBadRequest)
				return
			}
			if p.FileName() != "" {
				name, ctype, body = p.FileName(), p.Header.Get("Content-Type"), data
			}
		}
	} else {
		body, _ = io.ReadAll(r.Body)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.uploads[id]
	switch {
	case !ok:
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	case len(body) != u.Length:
		f.t.Errorf("fake slack: upload %s: %d bytes, files.getUploadURLExternal said %d", id, len(body), u.Length)
		http.Error(w, "length mismatch", http.StatusBadRequest)
		return
	case name != "" && name != u.Name:
		f.t.Errorf("fake slack: upload %s named %q, files.getUploadURLExternal said %q", id, name, u.Name)
	}
	u.Body, u.ContentType, u.Uploaded = body, ctype, true
	f.notifyLocked()
	io.WriteString(w, "OK - "+strconv.Itoa(len(body)))
}

func (f *fakeSlack) completeUpload(w http.ResponseWriter, form url.Values) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(form.Get("files")), &files); err != nil || len(files) == 0 {
		writeJSON(w, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	ch, thread, comment := form.Get("channel_id"), form.Get("thread_ts"), form.Get("initial_comment")
	f.mu.Lock()
	if !f.channels[ch] {
		f.mu.Unlock()
		writeJSON(w, map[string]any{"ok": false, "error": "channel_not_found"})
		return
	}
	m := &fakeMessage{Channel: ch, TS: f.newTSLocked(), ThreadTS: thread, Text: comment, User: f.botUser, BotID: f.botID}
	var out []map[string]any
	for _, fl := range files {
		u, ok := f.uploads[fl.ID]
		if !ok || !u.Uploaded {
			f.mu.Unlock()
			writeJSON(w, map[string]any{"ok": false, "error": "file_not_found"})
			return
		}
		u.Title, u.Shared = fl.Title, true
		m.Files = append(m.Files, *u)
		out = append(out, map[string]any{"id": u.ID, "title": u.Title})
	}
	f.msgs[ch+"/"+m.TS] = m
	if thread != "" {
		delete(f.status, ch+"/"+thread) // the share is a reply of the app
	}
	f.notifyLocked()
	f.mu.Unlock()
	// Slack announces the share as a file_share message of the app's
	// bot user (without bot_id).
	f.echo(map[string]any{"type": "message", "subtype": "file_share", "channel": ch, "channel_type": "channel",
		"user": f.botUser, "text": comment, "ts": m.TS, "thread_ts": thread, "event_ts": m.TS, "team": f.team,
		"upload": false, "files": out})
	writeJSON(w, map[string]any{"ok": true, "files": out})
}

// sharedFiles returns the files the app shared in a thread, in order,
// with the comment shown with each.
func (f *fakeSlack) sharedFiles(channel, thread string) (files []fakeUpload, comments []string) {
	for _, m := range f.thread(channel, thread) {
		for _, u := range m.Files {
			files = append(files, u)
			comments = append(comments, unescape(m.Text))
		}
	}
	return files, comments
}
