package slack

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/attach"
)

// files returns the files of a message, unread, and the Inbound.Fetch
// that reads the small text files and images among them (see package
// attach). Slack's file links need the bot token, which is sent only to
// Slack's own hosts (and the configured API host).
func (a *Adapter) files(fs []file) ([]channels.File, func(context.Context) []channels.File) {
	if len(fs) == 0 {
		return nil, nil
	}
	out := make([]channels.File, 0, len(fs))
	download := map[string]string{} // a file's URL → its download link
	for _, f := range fs {
		cf := channels.File{
			Name:        channels.ShowName(firstNonEmpty(string(f.Name), string(f.Title), "file")),
			ContentType: string(f.Mimetype),
			Size:        f.Size,
			URL:         firstNonEmpty(string(f.Permalink), string(f.URLPrivate)),
		}
		switch f.Mode {
		case "external":
			cf.Skipped = "it is stored outside Slack"
		case "tombstone":
			cf.Skipped = "it was deleted"
		case "hidden_by_limit":
			cf.Skipped = "the workspace's plan hides it"
		}
		download[cf.URL] = firstNonEmpty(string(f.URLPrivateDownload), string(f.URLPrivate))
		out = append(out, cf)
	}
	fetch := func(ctx context.Context) []channels.File {
		r := attach.Reader{
			Client: a.hc,
			Request: func(ctx context.Context, cf channels.File) (*http.Request, error) {
				return a.fileRequest(ctx, download[cf.URL])
			},
		}
		return r.ReadAll(ctx, out, func(f channels.File, err error) {
			a.log.Warn("slack: cannot read a file", "file", f.Name, "err", err)
		})
	}
	return out, fetch
}

// fileRequest is a GET of a Slack file link with the bot token, when the
// link is on a Slack host.
func (a *Adapter) fileRequest(ctx context.Context, link string) (*http.Request, error) {
	u, err := url.Parse(link)
	if err != nil || u.Host == "" {
		return nil, errNoLink
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, err
	}
	if a.slackHost(u) {
		req.Header.Set("Authorization", "Bearer "+a.o.BotToken)
	}
	return req, nil
}

// slackHost reports whether u is on a host that may see the bot token:
// Slack's own (https only) or the configured API URL's.
func (a *Adapter) slackHost(u *url.URL) bool {
	if api, err := url.Parse(a.o.APIURL); err == nil && api.Host == u.Host {
		return true
	}
	h := strings.ToLower(u.Hostname())
	return u.Scheme == "https" && (h == "slack.com" || strings.HasSuffix(h, ".slack.com"))
}

// errNoLink: a file without a usable link.
var errNoLink = errors.New("the file has no usable link")
