package discord

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"
)

// FuzzReadSlash feeds application-command and autocomplete interactions
// through discordgo's decoding and readSlash.
func FuzzReadSlash(f *testing.F) {
	f.Add([]byte(`{"id":"7","application_id":"9","type":2,"token":"tok","channel_id":"2","guild_id":"3","data":{"id":"1","name":"model","type":1,"options":[{"name":"model","type":3,"value":" opus "}]},"member":{"user":{"id":"1","username":"ann"}}}`))
	f.Add([]byte(`{"id":"7","type":4,"token":"tok","channel_id":"2","data":{"name":"model","options":[{"name":"model","type":3,"value":"op","focused":true}]},"user":{"id":"1"}}`))
	f.Add([]byte(`{"id":"7","type":2,"token":"tok","channel_id":"2","data":{"name":"STOP","options":[null,{"name":"n","type":4,"value":3}]},"user":{"id":"1"}}`))
	f.Add([]byte(`{"id":"7","type":2,"token":"tok","data":null,"member":{"user":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var i discordgo.InteractionCreate
		if json.Unmarshal(data, &i) != nil {
			return
		}
		s, ok := readSlash(i.Interaction)
		if !ok {
			return
		}
		if s.channel == "" || s.name == "" || s.author.ID == "" || s.name != strings.ToLower(s.name) || s.arg != strings.TrimSpace(s.arg) {
			t.Errorf("readSlash accepted %+v", s)
		}
	})
}

// FuzzReadModal feeds modal submits through discordgo's decoding and
// readModal.
func FuzzReadModal(f *testing.F) {
	f.Add([]byte(`{"id":"7","type":5,"token":"tok","channel_id":"2","data":{"custom_id":"acpgw:form:modal:44","components":[{"type":1,"components":[{"type":4,"custom_id":"acpgw:form:f:1","value":"Ann"}]}]},"user":{"id":"1"}}`))
	f.Add([]byte(`{"id":"7","type":5,"token":"tok","data":{"custom_id":"acpgw:form:modal:","components":[{"type":1,"components":[{"type":4,"custom_id":"acpgw:form:f:-1","value":"x"}]},{"type":4}]}}`))
	f.Add([]byte(`{"id":"7","type":5,"token":"tok","data":{"custom_id":"other","components":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var i discordgo.InteractionCreate
		if json.Unmarshal(data, &i) != nil {
			return
		}
		msg, values, ok := readModal(i.Interaction)
		if !ok {
			return
		}
		if msg == "" {
			t.Errorf("readModal accepted a modal of no form")
		}
		for n := range values {
			if n < 0 {
				t.Errorf("readModal returned the field index %d", n)
			}
		}
	})
}

// FuzzReadReaction feeds MESSAGE_REACTION_ADD payloads through discordgo's
// decoding and readReaction.
func FuzzReadReaction(f *testing.F) {
	f.Add([]byte(`{"user_id":"1","message_id":"4","channel_id":"2","guild_id":"3","emoji":{"name":"🛑","id":null},"member":{"user":{"id":"1","username":"ann"}}}`))
	f.Add([]byte(`{"user_id":"1","message_id":"4","channel_id":"2","emoji":{"name":"party","id":"42"}}`))
	f.Add([]byte(`{"user_id":"","message_id":"4","channel_id":"2","emoji":{"name":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e discordgo.MessageReactionAdd
		if json.Unmarshal(data, &e) != nil {
			return
		}
		rc, ok := readReaction(e.MessageReaction, e.Member, false)
		if !ok {
			return
		}
		if rc.user == "" || rc.message == "" || rc.channel == "" || rc.emoji == "" {
			t.Errorf("readReaction accepted %+v", rc)
		}
	})
}
