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
		out = append(out, channels.File{Name: name, URL: at.URL, ContentType: at.ContentType, Size: at.Size})
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
	return func(ctx context.Context) []channels.File { return a.read(ctx, files) }
}

// read reads files; it blocks on I/O.
func (a *Adapter) read(ctx context.Context, files []channels.File) []channels.File {
	out := append([]channels.File(nil), files...)
	r := attach.Reader{Client: &http.Client{Transport: a.http, Timeout: fetchTimeout}}
	for i := range out {
		if err := r.Read(ctx, &out[i]); err != nil && ctx.Err() == nil {
			a.log.Warn("discord: cannot read an attachment", "file", out[i].Name, "err", err)
		}
	}
	return out
}
