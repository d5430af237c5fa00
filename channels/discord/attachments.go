package discord

import (
	"context"
	"net/http"
	"path"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
)

// fetchTimeout bounds the download of one attachment.
const fetchTimeout = 15 * time.Second

// readFiles returns the attachments of m.
func readFiles(m *discordgo.Message) []channels.File {
	var out []channels.File
	for _, at := range m.Attachments {
		if at == nil || at.URL == "" {
			continue
		}
		name := at.Filename
		if name == "" {
			name = path.Base(at.URL)
		}
		out = append(out, channels.File{Name: channels.ShowName(name), URL: at.URL, ContentType: at.ContentType, Size: at.Size})
	}
	return out
}

// fetcher returns the Inbound.Fetch of a message with files: it reads
// the small text files and images among them (see package attach).
// Discord's CDN needs no token, and gets none: the client is a plain one.
func (a *Adapter) fetcher(files []channels.File) func(context.Context) []channels.File {
	if len(files) == 0 {
		return nil
	}
	return func(ctx context.Context) []channels.File {
		r := attach.Reader{Client: &http.Client{Transport: a.http, Timeout: fetchTimeout}}
		return r.ReadAll(ctx, files, func(f channels.File, err error) {
			a.log.Warn("discord: cannot read an attachment", "file", f.Name, "err", err)
		})
	}
}
