package discord

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
)

// listMessages is GET /channels/{id}/messages with after and limit, as
// Discord answers it: the limit messages right after the id, newest
// first; limit 1 to 100, 50 when not given.
func (f *fakeDiscord) listMessages(w http.ResponseWriter, channel string, q url.Values) {
	limit := 50
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			writeError(w, 400, 50035, "Invalid Form Body: limit: int value should be less than or equal to 100.")
			return
		}
		limit = n
	}
	if q.Has("before") || q.Has("around") {
		f.violate("message history read with before or around: %v", q)
	}
	after := q.Get("after")
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.chans[channel]; !ok {
		writeError(w, 404, 10003, "Unknown Channel")
		return
	}
	f.historyReads++
	var ms []fakeMessage
	for _, m := range f.msgs {
		if m.Channel == channel && (after == "" || idLess(after, m.ID)) {
			ms = append(ms, *m)
		}
	}
	sortByID(ms)
	if len(ms) > limit {
		ms = ms[:limit] // the oldest after the id
	}
	slices.Reverse(ms)
	out := []map[string]any{}
	for i := range ms {
		out = append(out, f.listedJSONLocked(&ms[i]))
	}
	writeJSON(w, 200, out)
}

// getMessage is GET /channels/{id}/messages/{message}.
func (f *fakeDiscord) getMessage(w http.ResponseWriter, channel, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.messageReads++
	if _, ok := f.chans[channel]; !ok {
		writeError(w, 404, 10003, "Unknown Channel")
		return
	}
	m, ok := f.msgs[id]
	if !ok || m.Channel != channel {
		writeError(w, 404, 10008, "Unknown Message")
		return
	}
	writeJSON(w, 200, f.listedJSONLocked(m))
}

// member is GET /guilds/{guild}/members/{user}: the roles of a person who
// wrote in the fake.
func (f *fakeDiscord) member(w http.ResponseWriter, guild, user string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if guild != f.guild && !slices.Contains(f.shards.guilds, guild) {
		writeError(w, 404, 10004, "Unknown Guild")
		return
	}
	for _, m := range f.msgs {
		if m.Author.ID == user {
			writeJSON(w, 200, map[string]any{"user": userJSON(m.Author), "roles": nonNil(m.Author.Roles)})
			return
		}
	}
	writeError(w, 404, 10007, "Unknown Member")
}
