package slack

import (
	"net/http"
	"net/url"
	"slices"
)

// reactTo answers reactions.add and reactions.remove as Slack does:
// already_reacted and no_reaction when there is nothing to do.
func (f *fakeSlack) reactTo(w http.ResponseWriter, remove bool, form url.Values) {
	ch, ts, name := form.Get("channel"), form.Get("timestamp"), form.Get("name")
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.msgs[ch+"/"+ts]; !ok {
		writeJSON(w, map[string]any{"ok": false, "error": "message_not_found"})
		return
	}
	key := ch + "/" + ts
	has := slices.Contains(f.reactions[key], name)
	switch {
	case !remove && has:
		writeJSON(w, map[string]any{"ok": false, "error": "already_reacted"})
		return
	case remove && !has:
		writeJSON(w, map[string]any{"ok": false, "error": "no_reaction"})
		return
	case remove:
		f.reactions[key] = slices.DeleteFunc(f.reactions[key], func(n string) bool { return n == name })
	default:
		f.reactions[key] = append(f.reactions[key], name)
	}
	f.notifyLocked()
	writeJSON(w, map[string]any{"ok": true})
}

// reactionsOn returns the app's reactions on message channel/ts.
func (f *fakeSlack) reactionsOn(channel, ts string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.reactions[channel+"/"+ts])
}
