package slack

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/acpgw/gateway/channels"
)

// Seeds shaped like what Slack sends.
const (
	seedMessage = `{"token":"x","team_id":"T1","api_app_id":"A1","type":"event_callback","event_id":"Ev1","event_time":1,
"event":{"type":"message","channel":"C1","channel_type":"channel","user":"U1","text":"hi &lt;b&gt;","ts":"1.2","thread_ts":"1.1","team":"T1"}}`
	seedMention = `{"type":"event_callback","team_id":"T1","event_id":"Ev2","event":{"type":"app_mention","channel":"C1","user":"U1","text":"<@U0BOT> go","ts":"1.3"}}`
	seedChanged = `{"type":"event_callback","team_id":"T1","event_id":"Ev3","event":{"type":"message","subtype":"message_changed","channel":"C1","hidden":true,
"message":{"type":"message","user":"U0BOT","bot_id":"B0BOT","text":"edited","ts":"1.4"},"previous_message":{"user":"U0BOT","bot_id":"B0BOT","ts":"1.4"},"ts":"1.5"}}`
	seedClick = `{"type":"block_actions","user":{"id":"U1","username":"ann","name":"ann","team_id":"T1"},"team":{"id":"T1"},
"container":{"type":"message","message_ts":"1.6","channel_id":"C1","is_ephemeral":false,"thread_ts":"1.1"},"channel":{"id":"C1"},
"message":{"ts":"1.6","thread_ts":"1.1","text":"Allow?"},"actions":[{"action_id":"p/allow","block_id":"b","value":"p/allow","type":"button","action_ts":"1.7"}]}`
)

func TestDecodeEvent(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		want    eventCallback
		wantErr bool
	}{
		{"message", seedMessage, eventCallback{Type: "event_callback", TeamID: "T1", EventID: "Ev1", Event: event{
			Type: "message", Channel: "C1", ChannelType: "channel", User: "U1", Text: "hi &lt;b&gt;", TS: "1.2", ThreadTS: "1.1"}}, false},
		{"fields of other types are empty", `{"type":"event_callback","event_id":7,"event":{"type":"message","channel":"C1","user":{"id":"U1"},"ts":1.5}}`,
			eventCallback{Type: "event_callback", Event: event{Type: "message", Channel: "C1"}}, false},
		{"not a callback", `{"type":"app_rate_limited","team_id":"T1"}`, eventCallback{}, true},
		{"no channel", `{"type":"event_callback","event":{"type":"team_join"}}`, eventCallback{}, true},
		{"not JSON", `{"type":`, eventCallback{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeEvent([]byte(tc.payload))
			if (err != nil) != tc.wantErr {
				t.Fatalf("decodeEvent error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decodeEvent (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeClicks(t *testing.T) {
	got, err := decodeClicks([]byte(seedClick))
	if err != nil {
		t.Fatal(err)
	}
	want := []click{{Team: "T1", UserID: "U1", UserName: "ann", Channel: "C1", MessageTS: "1.6", ThreadTS: "1.1", OptionID: "p/allow", ActionTS: "1.7"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decodeClicks (-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{"type":"view_submission"}`, `{"type":"block_actions","actions":[]}`, `[]`} {
		if _, err := decodeClicks([]byte(bad)); err == nil {
			t.Errorf("decodeClicks(%s) = nil error", bad)
		}
	}
}

func FuzzDecodeEvent(f *testing.F) {
	for _, s := range []string{seedMessage, seedMention, seedChanged, seedStopped, `{}`, `null`, `{"event":null}`,
		`{"type":"event_callback","event":{"type":"reaction_added","user":"U1","reaction":"octagonal_sign","item":{"type":"message","channel":"C1","ts":"1.2"}}}`,
		`{"type":"event_callback","event":{"type":"reaction_removed","item":{"channel":"C1"}}}`,
		`{"type":"event_callback","event":{"type":"message","subtype":"message_deleted","channel":"C1","ts":"1.6","deleted_ts":"1.1","previous_message":{"ts":"1.1","thread_ts":"1.1"}}}`,
		`{"type":"event_callback","event":{"type":"channel_deleted","channel":"C1"}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		cb, err := decodeEvent(payload)
		if err != nil {
			return
		}
		if cb.Type != "event_callback" || cb.Event.Type == "" || cb.Event.Channel == "" {
			t.Fatalf("decodeEvent(%q) = %+v without an error", payload, cb)
		}
		_ = isOwn(cb.Event, Capabilities{BotUserID: "U0BOT", BotID: "B0BOT"})
	})
}

func FuzzDecodeClicks(f *testing.F) {
	for _, s := range []string{seedClick, `{"type":"block_actions"}`, `{"type":"block_actions","actions":[{}]}`,
		`{"type":"block_actions","user":{"id":"U1"},"channel":{"id":"C1"},"container":{"message_ts":"1.2"},"actions":[{"type":"static_select","action_id":"choice-select-0","selected_option":{"value":"m/1"}},{"type":"static_select","action_id":"choice-select-1"}]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		clicks, err := decodeClicks(payload)
		if err != nil {
			return
		}
		for _, c := range clicks {
			if c.Channel == "" || c.MessageTS == "" || c.UserID == "" || c.OptionID == "" {
				t.Fatalf("decodeClicks(%q) = %+v", payload, c)
			}
		}
	})
}

func FuzzDecodeEnvelope(f *testing.F) {
	f.Add([]byte(`{"envelope_id":"e1","type":"events_api","payload":` + seedMessage + `}`))
	f.Add([]byte(`{"envelope_id":"e2","type":"interactive","payload":` + seedClick + `}`))
	f.Add([]byte(`{"type":"hello"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		env, err := decodeEnvelope(raw)
		if err != nil {
			return
		}
		_, _ = decodeEvent(env.Payload)
		_, _ = decodeClicks(env.Payload)
	})
}

func FuzzInboundText(f *testing.F) {
	for _, s := range []string{"<@U0BOT> hi", "<@U0BOT|x>: a &lt; b", "<https://e.com|e.com>", "<", ">", "<@U0BOT", "&amp;lt;", "<!subteam^S|@x>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := inboundText(s, "U0BOT")
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("inboundText(%q) = %q: invalid UTF-8", s, out)
		}
		if strings.HasPrefix(s, "<@U0BOT> hi") && out != inboundText(s[len("<@U0BOT> "):], "U0BOT") {
			t.Fatalf("inboundText(%q) = %q: the leading mention was not simply removed", s, out)
		}
	})
}

// seedStopped is a click on Slack's Stop button of an agent session.
const seedStopped = `{"type":"event_callback","team_id":"T0FAKE","event_id":"Ev9","event":{"type":"agent_session_stopped",` +
	`"channel":"C0FAKE","thread_ts":"1700000000.000001","user":"U0ANN","event_ts":"1700000009.000001",` +
	`"streaming_message_ts":["1700000002.000001"]}}`

// FuzzDecodeSlash: a slash command's payload decodes without a panic,
// and one that decodes names a channel and a user.
func FuzzDecodeSlash(f *testing.F) {
	for _, s := range []string{
		`{"command":"/agent","text":"fix it","channel_id":"C1","user_id":"U1","user_name":"ann","team_id":"T1"}`,
		`{"channel_id":5,"user_id":"U1"}`, `{}`, `null`, `[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		sc, err := decodeSlash(payload)
		if err != nil {
			return
		}
		if sc.Channel == "" || sc.UserID == "" {
			t.Fatalf("decodeSlash(%q) = %+v", payload, sc)
		}
	})
}

// FuzzDecodeView: a modal's payload decodes without a panic; one that
// decodes names a user and the form's message, and its values never
// break formValues.
func FuzzDecodeView(f *testing.F) {
	for _, s := range []string{
		`{"type":"view_submission","user":{"id":"U1"},"view":{"id":"V1","callback_id":"gateway-form","private_metadata":"C1/1.2","state":{"values":{"field-0":{"value":{"type":"plain_text_input","value":"x"}},"field-1":{"value":{"selected_options":[{"value":"a"}]}}}}}}`,
		`{"type":"view_closed","user":{"id":"U1"},"view":{"callback_id":"gateway-form","private_metadata":"C1/"}}`,
		`{"type":"view_submission","view":{"state":{"values":{"a":null}}}}`, `{}`, `null`,
	} {
		f.Add([]byte(s))
	}
	form := &openForm{f: channels.Form{Fields: []channels.Field{
		{ID: "t", Kind: channels.FieldText, Required: true, Max: ptr(3)},
		{ID: "m", Kind: channels.FieldMulti, Options: []channels.Option{{ID: "a"}}},
		{ID: "n", Kind: channels.FieldNumber, Min: ptr(0)},
		{ID: "c", Kind: channels.FieldChoice}, {ID: "b", Kind: channels.FieldBool},
	}}}
	f.Fuzz(func(t *testing.T, payload []byte) {
		v, err := decodeView(payload)
		if err != nil {
			return
		}
		if v.UserID == "" || v.Channel == "" || v.MessageTS == "" || (v.Type != "view_submission" && v.Type != "view_closed") {
			t.Fatalf("decodeView(%q) = %+v", payload, v)
		}
		values, errs := formValues(form, v.State)
		if (values == nil) == (errs == nil) {
			t.Fatalf("formValues = %v, %v: want exactly one", values, errs)
		}
	})
}
