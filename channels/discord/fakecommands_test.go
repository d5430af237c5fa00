package discord

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"
	"unicode/utf8"
)

// The fake's application commands: bulk overwrites (global or per guild),
// checked as Discord checks them, and interactions of type 2 (a command)
// and 4 (its autocomplete).

// fakeAppCommand is what the fake keeps of a registered command.
type fakeAppCommand struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        int    `json:"type"`
	Options     []struct {
		Type         int    `json:"type"`
		Name         string `json:"name"`
		Description  string `json:"description"`
		Required     bool   `json:"required"`
		Autocomplete bool   `json:"autocomplete"`
		Choices      []struct {
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"choices"`
	} `json:"options"`
}

var fakeCommandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)

// putCommands is PUT /applications/{app}[/guilds/{guild}]/commands.
func (f *fakeDiscord) putCommands(w http.ResponseWriter, app, guild string, body []byte) {
	var cmds []fakeAppCommand
	if err := json.Unmarshal(body, &cmds); err != nil || cmds == nil {
		writeError(w, 400, 50109, fmt.Sprintf("The request body contains invalid JSON: %v", err))
		return
	}
	if app != f.app {
		writeError(w, 403, 50001, "Missing Access")
		return
	}
	if guild != "" && guild != f.guild {
		writeError(w, 403, 50001, "Missing Access")
		return
	}
	if len(cmds) > 100 {
		writeError(w, 400, 50035, "Invalid Form Body: at most 100 commands")
		return
	}
	names := map[string]bool{}
	for _, c := range cmds {
		if !fakeCommandName.MatchString(c.Name) || names[c.Name] {
			writeError(w, 400, 50035, "Invalid Form Body: name: "+c.Name)
			return
		}
		names[c.Name] = true
		if n := utf8.RuneCountInString(c.Description); n < 1 || n > 100 {
			writeError(w, 400, 50035, "Invalid Form Body: description of "+c.Name)
			return
		}
		for _, o := range c.Options {
			if o.Type != 3 || !fakeCommandName.MatchString(o.Name) || o.Description == "" || utf8.RuneCountInString(o.Description) > 100 {
				writeError(w, 400, 50035, "Invalid Form Body: option of "+c.Name)
				return
			}
			// Discord: at most 25 choices, names of 1 to 100 characters,
			// string values of at most 100, and no autocomplete beside
			// choices.
			if len(o.Choices) > 25 || (len(o.Choices) > 0 && o.Autocomplete) {
				writeError(w, 400, 50035, "Invalid Form Body: choices of "+c.Name)
				return
			}
			for _, ch := range o.Choices {
				v, ok := ch.Value.(string)
				if n := utf8.RuneCountInString(ch.Name); n < 1 || n > 100 || !ok || utf8.RuneCountInString(v) > 100 {
					writeError(w, 400, 50035, "Invalid Form Body: a choice of "+c.Name)
					return
				}
			}
		}
	}
	f.mu.Lock()
	if f.appCommands == nil {
		f.appCommands = map[string][]fakeAppCommand{}
	}
	f.appCommands[guild] = cmds
	f.commandPuts++
	f.changedLocked()
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// registered returns the commands registered in guild ("" global), and
// whether any overwrite reached that scope.
func (f *fakeDiscord) registered(guild string) ([]fakeAppCommand, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.appCommands[guild]
	return c, ok
}

// editOriginal is PATCH /webhooks/{app}/{token}/messages/@original: the
// answer to a deferred interaction.
func (f *fakeDiscord) editOriginal(w http.ResponseWriter, app, token string, body []byte) {
	var b sendBody
	json.Unmarshal(body, &b)
	f.mu.Lock()
	defer f.mu.Unlock()
	in, ok := f.interactions[token]
	if !ok || app != f.app {
		writeError(w, 404, 10015, "Unknown Webhook")
		return
	}
	if in.Acked.IsZero() {
		f.violations = append(f.violations, fmt.Sprintf("original response of interaction %s edited before its acknowledgement", in.ID))
		writeError(w, 404, 10015, "Unknown Webhook")
		return
	}
	content := ""
	if b.Content != nil {
		content = *b.Content
	}
	in.Original = &content
	f.changedLocked()
	writeJSON(w, 200, messageJSON(&fakeMessage{ID: f.newIDLocked(), Author: f.bot, Content: content}))
}

// slash makes who give application command name in channel, with arg as
// its string option opt ("" none), and returns the interaction's token.
// With autocomplete it is the autocomplete request while who types arg.
func (f *fakeDiscord) slash(who fakeUser, channel, name, opt, arg string, autocomplete bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newIDLocked()
	token := "itoken-" + id
	f.interactions[token] = &fakeInteraction{ID: id, Token: token, Sent: time.Now()}
	data := map[string]any{"id": f.newIDLocked(), "name": name, "type": 1}
	if opt != "" {
		o := map[string]any{"name": opt, "type": 3, "value": arg}
		if autocomplete {
			o["focused"] = true
		}
		data["options"] = []any{o}
	}
	typ := 2
	if autocomplete {
		typ = 4
	}
	d := map[string]any{
		"id":             id,
		"application_id": f.app,
		"type":           typ,
		"token":          token,
		"version":        1,
		"channel_id":     channel,
		"data":           data,
	}
	if ch := f.chans[channel]; ch != nil && ch.Guild != "" {
		d["guild_id"] = ch.Guild
		d["member"] = map[string]any{"user": userJSON(who), "roles": nonNil(who.Roles)}
	} else {
		d["user"] = userJSON(who)
	}
	f.dispatchLocked("INTERACTION_CREATE", d)
	return token
}

// checkModal checks a modal response (type 9) as Discord does: a title of
// 1 to 45 characters, a custom id, 1 to 5 action rows of one text input
// each, labels of 1 to 45 characters. It returns Discord's error message,
// "" when the modal is valid.
func checkModal(body []byte) string {
	var b struct {
		Data struct {
			CustomID   string `json:"custom_id"`
			Title      string `json:"title"`
			Components []struct {
				Type       int `json:"type"`
				Components []struct {
					Type     int    `json:"type"`
					CustomID string `json:"custom_id"`
					Label    string `json:"label"`
					Style    int    `json:"style"`
				} `json:"components"`
			} `json:"components"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return "Invalid Form Body: " + err.Error()
	}
	d := b.Data
	if n := utf8.RuneCountInString(d.Title); n < 1 || n > 45 || d.CustomID == "" {
		return "Invalid Form Body: modal title or custom_id"
	}
	if len(d.Components) < 1 || len(d.Components) > 5 {
		return fmt.Sprintf("Invalid Form Body: a modal with %d rows", len(d.Components))
	}
	for _, r := range d.Components {
		if r.Type != 1 || len(r.Components) != 1 {
			return "Invalid Form Body: a modal row must hold one text input"
		}
		in := r.Components[0]
		if n := utf8.RuneCountInString(in.Label); in.Type != 4 || in.CustomID == "" || n < 1 || n > 45 || (in.Style != 1 && in.Style != 2) {
			return "Invalid Form Body: a bad text input"
		}
	}
	return ""
}

// modalInputs returns the custom ids of the text inputs of the modal that
// interaction token was answered with.
func (f *fakeDiscord) modalInputs(token string) (modalID string, inputs []string) {
	var b struct {
		Data struct {
			CustomID   string `json:"custom_id"`
			Components []struct {
				Components []struct {
					CustomID string `json:"custom_id"`
				} `json:"components"`
			} `json:"components"`
		} `json:"data"`
	}
	json.Unmarshal(f.interaction(token).AckBody, &b)
	for _, r := range b.Data.Components {
		for _, c := range r.Components {
			inputs = append(inputs, c.CustomID)
		}
	}
	return b.Data.CustomID, inputs
}

// submit makes who submit the modal modalID, opened from message msg in
// channel, with values by the inputs' custom ids, and returns the
// interaction's token.
func (f *fakeDiscord) submit(who fakeUser, channel, msg, modalID string, values map[string]string) string {
	var rows []any
	for id, v := range values {
		rows = append(rows, map[string]any{"type": 1, "components": []any{map[string]any{"type": 4, "custom_id": id, "value": v}}})
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.newIDLocked()
	token := "itoken-" + id
	f.interactions[token] = &fakeInteraction{ID: id, Token: token, Sent: time.Now(), Message: msg}
	d := map[string]any{
		"id":             id,
		"application_id": f.app,
		"type":           5,
		"token":          token,
		"version":        1,
		"channel_id":     channel,
		"data":           map[string]any{"custom_id": modalID, "components": rows},
		"message":        map[string]any{"id": msg, "channel_id": channel, "content": "", "type": 0},
	}
	if ch := f.chans[channel]; ch != nil && ch.Guild != "" {
		d["guild_id"] = ch.Guild
		d["member"] = map[string]any{"user": userJSON(who), "roles": nonNil(who.Roles)}
	} else {
		d["user"] = userJSON(who)
	}
	f.dispatchLocked("INTERACTION_CREATE", d)
	return token
}

// pickValues is pick with any number of values (a multi select).
func (f *fakeDiscord) pickValues(who fakeUser, channel, msg, customID string, values []string) string {
	return f.component(who, channel, msg, map[string]any{"custom_id": customID, "component_type": 3, "values": nonNil(values)})
}
