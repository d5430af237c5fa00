package discord

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// flagComponentsV2 is IS_COMPONENTS_V2 (the fake's copy).
const flagComponentsV2 = 1 << 15

// fakeComponent is what the fake reads of a message component.
type fakeComponent struct {
	Type       int             `json:"type"`
	Content    *string         `json:"content"`
	CustomID   string          `json:"custom_id"`
	Components []fakeComponent `json:"components"`
}

// checkComponents checks a message's components as Discord does: the
// layout components of Components V2 (container 17, text display 10) only
// with the flag, at most 40 components in all and 4,000 characters of
// text displays; with the flag no content. It returns the error message
// Discord would answer, "" when the body is valid.
func checkComponents(flags int, content *string, raw json.RawMessage) string {
	v2 := flags&flagComponentsV2 != 0
	if v2 && content != nil && *content != "" {
		return "Invalid Form Body: content: cannot be used with IS_COMPONENTS_V2"
	}
	if !hasComponents(raw) {
		return ""
	}
	var top []fakeComponent
	if err := json.Unmarshal(raw, &top); err != nil {
		return "Invalid Form Body: components: " + err.Error()
	}
	count, chars := 0, 0
	var walk func(cs []fakeComponent, parent int) string
	walk = func(cs []fakeComponent, parent int) string {
		for _, c := range cs {
			count++
			switch c.Type {
			case 1: // action row
				if parent != 0 && parent != 17 {
					return "action row nested in a component that cannot hold it"
				}
			case 2: // button
				if parent != 1 {
					return "button outside an action row"
				}
			case 10, 17: // text display, container
				if !v2 {
					return fmt.Sprintf("component type %d needs the IS_COMPONENTS_V2 flag", c.Type)
				}
				if c.Type == 17 && parent != 0 {
					return "container nested in a component"
				}
				if c.Type == 10 {
					if c.Content == nil || *c.Content == "" {
						return "text display without content"
					}
					chars += utf8.RuneCountInString(*c.Content)
				}
			default:
				return fmt.Sprintf("component type %d unknown to the fake", c.Type)
			}
			if msg := walk(c.Components, c.Type); msg != "" {
				return msg
			}
		}
		return ""
	}
	if msg := walk(top, 0); msg != "" {
		return "Invalid Form Body: components: " + msg
	}
	if count > 40 {
		return fmt.Sprintf("Invalid Form Body: components: %d components, at most 40", count)
	}
	if chars > 4000 {
		return fmt.Sprintf("Invalid Form Body: components: %d characters of text, at most 4000", chars)
	}
	return ""
}

// cardRows returns the text displays of a Components V2 message's
// containers, in order; ok is false for a message that is not one.
func cardRows(m fakeMessage) (rows []string, ok bool) {
	if m.Flags&flagComponentsV2 == 0 {
		return nil, false
	}
	var top []fakeComponent
	if json.Unmarshal(m.Components, &top) != nil {
		return nil, false
	}
	for _, c := range top {
		if c.Type != 17 {
			continue
		}
		for _, d := range c.Components {
			if d.Type == 10 && d.Content != nil {
				rows = append(rows, *d.Content)
			}
		}
	}
	return rows, true
}
