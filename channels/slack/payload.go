package slack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The payload decoders read only the fields the adapter uses, into its own
// types, so that a field Slack adds or a field of an unexpected JSON type
// never loses an event: text fields accept any JSON value and keep strings
// only.

// str is a JSON string field that decodes any other JSON value as "".
type str string

// UnmarshalJSON keeps a JSON string and ignores every other value.
func (s *str) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '"' {
		*s = ""
		return nil
	}
	var v string
	if err := json.Unmarshal(b, &v); err != nil {
		*s = ""
		return nil
	}
	*s = str(v)
	return nil
}

// eventCallback is the payload of an events_api envelope.
type eventCallback struct {
	Type    str   `json:"type"` // "event_callback"
	TeamID  str   `json:"team_id"`
	EventID str   `json:"event_id"`
	Event   event `json:"event"`
}

// event is the inner event of an event_callback: a message or an
// app_mention.
type event struct {
	Type        str      `json:"type"`
	Subtype     str      `json:"subtype"`
	Channel     str      `json:"channel"`
	ChannelType str      `json:"channel_type"` // "channel", "group", "im", "mpim"
	User        str      `json:"user"`
	BotID       str      `json:"bot_id"`
	Username    str      `json:"username"`
	Text        str      `json:"text"`
	TS          str      `json:"ts"`
	ThreadTS    str      `json:"thread_ts"`
	BotProfile  *profile `json:"bot_profile"`
	UserProfile *profile `json:"user_profile"`
	// Message and PreviousMessage are set on message_changed and
	// message_deleted: the edited message after and before.
	Message         *innerMessage `json:"message"`
	PreviousMessage *innerMessage `json:"previous_message"`
	Files           []file        `json:"files"`
	// StreamingMessageTS are the app's streams Slack stopped, on
	// agent_session_stopped.
	StreamingMessageTS []str `json:"streaming_message_ts"`
}

// file is a file shared in a message.
type file struct {
	Name     str `json:"name"`
	Title    str `json:"title"`
	Mimetype str `json:"mimetype"`
	Size     int `json:"size"`
	// URLPrivateDownload needs the bot token (scope files:read).
	URLPrivateDownload str `json:"url_private_download"`
	URLPrivate         str `json:"url_private"`
	Permalink          str `json:"permalink"`
	// Mode is "hosted" or "snippet" for files Slack holds; "external",
	// "tombstone" (deleted) and "hidden_by_limit" ones cannot be read.
	Mode str `json:"mode"`
}

// innerMessage is a message nested in a message_changed or
// message_deleted event, or the message of a block_actions payload.
type innerMessage struct {
	User     str `json:"user"`
	BotID    str `json:"bot_id"`
	Text     str `json:"text"`
	TS       str `json:"ts"`
	ThreadTS str `json:"thread_ts"`
}

// profile holds the names Slack sometimes includes with an event.
type profile struct {
	Name        str `json:"name"`
	DisplayName str `json:"display_name"`
	RealName    str `json:"real_name"`
}

// best returns the most human name of p, "" for a nil p.
func (p *profile) best() string {
	if p == nil {
		return ""
	}
	return firstNonEmpty(string(p.DisplayName), string(p.RealName), string(p.Name))
}

// blockActions is the payload of an interactive envelope of type
// block_actions: a click on a button.
type blockActions struct {
	Type str `json:"type"`
	User struct {
		ID       str `json:"id"`
		Username str `json:"username"`
		Name     str `json:"name"`
		TeamID   str `json:"team_id"`
	} `json:"user"`
	Team struct {
		ID str `json:"id"`
	} `json:"team"`
	Channel struct {
		ID str `json:"id"`
	} `json:"channel"`
	Container struct {
		Type      str `json:"type"`
		MessageTS str `json:"message_ts"`
		ChannelID str `json:"channel_id"`
		ThreadTS  str `json:"thread_ts"`
	} `json:"container"`
	Message *innerMessage `json:"message"`
	Actions []struct {
		ActionID str `json:"action_id"`
		BlockID  str `json:"block_id"`
		Value    str `json:"value"`
		ActionTS str `json:"action_ts"`
	} `json:"actions"`
}

// click is one button click decoded from a block_actions payload.
type click struct {
	Team      string
	UserID    string
	UserName  string // a hint: the user's handle
	Channel   string
	MessageTS string // the message the button is on
	ThreadTS  string // the thread of that message ("" when top-level)
	OptionID  string
	ActionTS  string
}

// errNotAnEvent is returned for payloads the adapter has no use for.
var errNotAnEvent = errors.New("not an event the adapter handles")

// decodeEvent decodes the payload of an events_api envelope. It returns an
// error for malformed JSON and for payloads that are not an event_callback
// with an event type and a channel.
func decodeEvent(payload []byte) (eventCallback, error) {
	var cb eventCallback
	if err := json.Unmarshal(payload, &cb); err != nil {
		return eventCallback{}, fmt.Errorf("decode event: %w", err)
	}
	if cb.Type != "event_callback" || cb.Event.Type == "" || cb.Event.Channel == "" {
		return eventCallback{}, errNotAnEvent
	}
	return cb, nil
}

// decodeClicks decodes the payload of an interactive envelope into the
// button clicks it carries. It returns an error for malformed JSON, for
// other interaction types and for clicks it cannot place in a channel.
func decodeClicks(payload []byte) ([]click, error) {
	var ba blockActions
	if err := json.Unmarshal(payload, &ba); err != nil {
		return nil, fmt.Errorf("decode interaction: %w", err)
	}
	if ba.Type != "block_actions" {
		return nil, errNotAnEvent
	}
	ch := firstNonEmpty(string(ba.Container.ChannelID), string(ba.Channel.ID))
	msgTS := string(ba.Container.MessageTS)
	threadTS := string(ba.Container.ThreadTS)
	if ba.Message != nil {
		msgTS = firstNonEmpty(msgTS, string(ba.Message.TS))
		threadTS = firstNonEmpty(string(ba.Message.ThreadTS), threadTS)
	}
	if ch == "" || msgTS == "" || ba.User.ID == "" {
		return nil, errNotAnEvent
	}
	var out []click
	for _, a := range ba.Actions {
		opt := firstNonEmpty(string(a.Value), string(a.ActionID))
		if opt == "" {
			continue
		}
		out = append(out, click{
			Team:      firstNonEmpty(string(ba.Team.ID), string(ba.User.TeamID)),
			UserID:    string(ba.User.ID),
			UserName:  firstNonEmpty(string(ba.User.Name), string(ba.User.Username)),
			Channel:   ch,
			MessageTS: msgTS,
			ThreadTS:  threadTS,
			OptionID:  opt,
			ActionTS:  string(a.ActionTS),
		})
	}
	if len(out) == 0 {
		return nil, errNotAnEvent
	}
	return out, nil
}

// envelope is the part of a Socket Mode message needed to acknowledge and
// route it when slack-go could not parse it.
type envelope struct {
	Type       str             `json:"type"`
	EnvelopeID str             `json:"envelope_id"`
	Payload    json.RawMessage `json:"payload"`
}

// decodeEnvelope decodes a raw Socket Mode message.
func decodeEnvelope(raw []byte) (envelope, error) {
	var e envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		return envelope{}, fmt.Errorf("decode envelope: %w", err)
	}
	return e, nil
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
