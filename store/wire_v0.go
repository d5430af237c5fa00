package store

// Version 0 of the shared records, as the code before wire types wrote
// them: a running turn's prompt was the TurnPrompt struct itself, whose
// author and files had the Go field names of channels.Author and
// channels.File, and its time was RFC 3339. These types are frozen: they
// read what is stored, and nothing writes them.

import (
	"time"

	"github.com/acpgw/gateway/channels"
)

type turnPromptV0 struct {
	ID     string    `json:"id"`
	Author authorV0  `json:"author"`
	Text   string    `json:"text"`
	Files  []fileV0  `json:"files"`
	Space  string    `json:"space"`
	Time   time.Time `json:"time"`
}

type authorV0 struct {
	ID    string   `json:"ID"`
	Name  string   `json:"Name"`
	Bot   bool     `json:"Bot"`
	Self  bool     `json:"Self"`
	Roles []string `json:"Roles"`
}

type fileV0 struct {
	Name        string `json:"Name"`
	ContentType string `json:"ContentType"`
	Size        int    `json:"Size"`
	URL         string `json:"URL"`
	Text        string `json:"Text"`
	Data        []byte `json:"Data"`
	Skipped     string `json:"Skipped"`
}

func (o turnPromptV0) prompt() TurnPrompt {
	a := o.Author
	return TurnPrompt{
		ID:     channels.MessageID(o.ID),
		Author: channels.Author{ID: a.ID, Name: a.Name, Bot: a.Bot, Self: a.Self, Roles: a.Roles},
		Text:   o.Text, Space: o.Space, Time: normTime(o.Time),
		Files: convert(o.Files, func(f fileV0) channels.File {
			return channels.File{Name: f.Name, ContentType: f.ContentType, Size: f.Size, URL: f.URL, Text: f.Text, Data: f.Data, Skipped: f.Skipped}
		}),
	}
}
