package discord

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
)

// maxUploadBytes is the largest file the adapter uploads: Discord takes
// files of up to 10 MiB per file from bots by default (its developer
// documentation, "Uploading Files"; more in boosted servers, which the
// adapter does not count on), and answers larger ones with 413 (40005).
const maxUploadBytes = 10 << 20

// Upload posts f in t as a message with one attachment (a multipart
// files[0] and payload_json), its caption as the message's text. It blocks
// on I/O. It returns a *channels.RateLimitError when Discord asks to wait
// and a *channels.PermanentError when Discord refuses the file (too large,
// no permission to attach files).
func (a *Adapter) Upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	ch, err := channelOf(t)
	if err != nil {
		return channels.Handle{}, err
	}
	if len(f.Data) > maxUploadBytes {
		return channels.Handle{}, channels.Permanent(fmt.Errorf("discord: upload: %s has %d bytes, more than Discord's %d", f.Name, len(f.Data), maxUploadBytes))
	}
	msg, err := a.s.ChannelMessageSendComplex(ch, &discordgo.MessageSend{
		Content:         render(channels.Message{Kind: channels.KindText, Text: f.Caption}),
		Files:           []*discordgo.File{{Name: fileName(f.Name), ContentType: f.Type(), Reader: bytes.NewReader(f.Data)}},
		AllowedMentions: noMentions(),
	}, requestOptions(ctx)...)
	if err != nil {
		return channels.Handle{}, apiError("upload", err)
	}
	return channels.Handle{Thread: t, ID: channels.MessageID(msg.ID)}, nil
}

// fileName returns name as an attachment's file name: control characters
// and path separators become "_", and an empty name is "file".
func fileName(name string) string {
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '/' || r == '\\' || r == '"' {
			return '_'
		}
		return r
	}, name)
	if strings.Trim(name, ". ") == "" {
		return "file"
	}
	return name
}
