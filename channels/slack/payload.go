package slack

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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
	// Metadata is the message's metadata (conversations.replies with
	// include_all_metadata): the app's own mark on what is not the
	// agent's text (metaEvent).
	Metadata struct {
		EventType str `json:"event_type"`
	} `json:"metadata"`
	// Message and PreviousMessage are set on message_changed and
	// message_deleted: the edited message after and before.
	Message         *innerMessage `json:"message"`
	PreviousMessage *innerMessage `json:"previous_message"`
	// DeletedTS is the deleted message's ts, on message_deleted.
	DeletedTS str    `json:"deleted_ts"`
	Files     []file `json:"files"`
	// StreamingMessageTS are the app's streams Slack stopped, on
	// agent_session_stopped.
	StreamingMessageTS []str `json:"streaming_message_ts"`
	// Reaction (the emoji's name) and Item (the message reacted to) are
	// set on reaction_added and reaction_removed.
	Reaction str `json:"reaction"`
	Item     struct {
		Type    str `json:"type"`
		Channel str `json:"channel"`
		TS      str `json:"ts"`
	} `json:"item"`
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
	// Subtype is "tombstone" for a deleted thread root that keeps its
	// replies.
	Subtype  str `json:"subtype"`
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

// actor is who an interactive payload is from: its user and team.
type actor struct {
	User struct {
		ID       str `json:"id"`
		Username str `json:"username"`
		Name     str `json:"name"`
		TeamID   str `json:"team_id"`
	} `json:"user"`
	Team struct {
		ID str `json:"id"`
	} `json:"team"`
}

// userName returns the actor's name, its username when Slack gave none.
func (a *actor) userName() string {
	return firstNonEmpty(string(a.User.Name), string(a.User.Username))
}

// team returns the actor's team: the payload's, else the user's.
func (a *actor) team() string {
	return firstNonEmpty(string(a.Team.ID), string(a.User.TeamID))
}

// blockActions is the payload of an interactive envelope of type
// block_actions: a click on a button, or an option picked in a select
// menu.
type blockActions struct {
	Type str `json:"type"`
	actor
	Channel struct {
		ID str `json:"id"`
	} `json:"channel"`
	Container struct {
		Type      str `json:"type"`
		MessageTS str `json:"message_ts"`
		ChannelID str `json:"channel_id"`
		ThreadTS  str `json:"thread_ts"`
	} `json:"container"`
	Message   *innerMessage `json:"message"`
	TriggerID str           `json:"trigger_id"`
	Actions   []struct {
		Type     str `json:"type"`
		ActionID str `json:"action_id"`
		BlockID  str `json:"block_id"`
		Value    str `json:"value"`
		ActionTS str `json:"action_ts"`
		// SelectedOption is the option picked in a select menu.
		SelectedOption *struct {
			Value str `json:"value"`
		} `json:"selected_option"`
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
	TriggerID string // opens a modal (views.open) for a few seconds
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
	if (cb.Event.Type == "reaction_added" || cb.Event.Type == "reaction_removed") && cb.Event.Channel == "" {
		if cb.Event.Item.TS == "" {
			return eventCallback{}, errNotAnEvent
		}
		cb.Event.Channel = cb.Event.Item.Channel // a reaction names its channel in its item
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
		if a.SelectedOption != nil {
			opt = string(a.SelectedOption.Value)
		} else if strings.HasSuffix(string(a.Type), "select") {
			continue // a menu cleared: nothing picked
		}
		if opt == "" {
			continue
		}
		out = append(out, click{
			Team:      ba.team(),
			UserID:    string(ba.User.ID),
			UserName:  ba.userName(),
			Channel:   ch,
			MessageTS: msgTS,
			ThreadTS:  threadTS,
			OptionID:  opt,
			ActionTS:  string(a.ActionTS),
			TriggerID: string(ba.TriggerID),
		})
	}
	if len(out) == 0 {
		return nil, errNotAnEvent
	}
	return out, nil
}

// slash is the payload of a slash_commands envelope: the app's slash
// command given in a channel.
type slash struct {
	Command  string
	Text     string
	Channel  string
	UserID   string
	UserName string
	Team     string
}

// decodeSlash decodes the payload of a slash_commands envelope. It
// returns an error for malformed JSON and for a command without a
// channel or a user.
func decodeSlash(payload []byte) (slash, error) {
	var p struct {
		Command   str `json:"command"`
		Text      str `json:"text"`
		ChannelID str `json:"channel_id"`
		UserID    str `json:"user_id"`
		UserName  str `json:"user_name"`
		TeamID    str `json:"team_id"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return slash{}, fmt.Errorf("decode slash command: %w", err)
	}
	if p.ChannelID == "" || p.UserID == "" {
		return slash{}, errNotAnEvent
	}
	return slash{Command: string(p.Command), Text: string(p.Text), Channel: string(p.ChannelID),
		UserID: string(p.UserID), UserName: string(p.UserName), Team: string(p.TeamID)}, nil
}

// stateValue is the value of one element of a submitted modal.
type stateValue struct {
	Type           str `json:"type"`
	Value          str `json:"value"`
	SelectedOption *struct {
		Value str `json:"value"`
	} `json:"selected_option"`
	SelectedOptions []struct {
		Value str `json:"value"`
	} `json:"selected_options"`
}

// view is a form's modal submitted (view_submission) or closed
// (view_closed).
type view struct {
	Type      string // "view_submission" or "view_closed"
	UserID    string
	UserName  string
	Team      string
	ViewID    string
	Hash      string
	Channel   string // the form message's channel and ts, from private_metadata
	MessageTS string
	// State holds the submitted values by block id and action id.
	State map[string]map[string]stateValue
}

// decodeView decodes the payload of an interactive envelope about a
// form's modal. It returns an error for malformed JSON, for other
// interactions and for modals that are not the gateway's forms.
func decodeView(payload []byte) (view, error) {
	var p struct {
		Type str `json:"type"`
		actor
		View struct {
			ID              str `json:"id"`
			Hash            str `json:"hash"`
			CallbackID      str `json:"callback_id"`
			PrivateMetadata str `json:"private_metadata"`
			State           struct {
				Values map[string]map[string]stateValue `json:"values"`
			} `json:"state"`
		} `json:"view"`
	}
	if err := json.Unmarshal(payload, &p); err != nil {
		return view{}, fmt.Errorf("decode view: %w", err)
	}
	if (p.Type != "view_submission" && p.Type != "view_closed") || p.View.CallbackID != formCallbackID || p.User.ID == "" {
		return view{}, errNotAnEvent
	}
	channel, ts, ok := strings.Cut(string(p.View.PrivateMetadata), "/")
	if !ok || channel == "" || ts == "" {
		return view{}, errNotAnEvent
	}
	return view{
		Type: string(p.Type), UserID: string(p.User.ID), UserName: p.userName(),
		Team: p.team(), ViewID: string(p.View.ID), Hash: string(p.View.Hash),
		Channel: channel, MessageTS: ts, State: p.View.State.Values,
	}, nil
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
