package main

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"

	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
)

// webTokenFile is where the gateway keeps the token it makes for the web
// chat, in the data directory.
const webTokenFile = "web-token"

// webAccess returns the web chat's local token (web.Options.LocalToken)
// and what a person without a token is told (web.Options.TokenHelp).
// With neither channels.web.token nor users, and open not set, the token
// is read from DATADIR/web-token, made at the first start: another
// account of the machine cannot use the chat without that file. With
// open, the chat has no token, and the log says so.
func webAccess(cfg config.Config, wc web.Config, log *slog.Logger) (local, help string, err error) {
	switch {
	case wc.Token != "" || len(wc.Users) > 0:
		return "", "ask the gateway's operator for yours (channels.web.token or channels.web.users)", nil
	case wc.Open:
		log.Warn("the web chat is open: every account of this machine can use it, and through it the agents (channels.web.open: true); remove it to have a token made")
		return "", "", nil
	}
	path := filepath.Join(cfg.DataDir, webTokenFile)
	tok, made, err := web.LoadToken(path)
	if err != nil {
		return "", "", fmt.Errorf("channels.web: %w; set channels.web.token, or fix %s", err, path)
	}
	if made {
		log.Info("made the web chat's access token", "file", path)
	}
	return tok, "open the address the gateway printed at start (\"web chat at http://…/?token=…\"), or read the token in " + path + " (its owner only can)", nil
}

// checkEdgeWeb refuses a web chat on gateway edge without a configured
// token: each edge would make its own, and a person let in by one edge
// would be refused by the next. open serves without any.
func checkEdgeWeb(wc web.Config) error {
	if wc.Token != "" || len(wc.Users) > 0 || wc.Open {
		return nil
	}
	return errors.New("channels.web.token: gateway edge needs the web chat's token configured, the same on every edge (set channels.web.token or channels.web.users; or channels.web.open: true to serve without one on 127.0.0.1)")
}

// webCheckNote is what gateway check says of the web chat's access, or
// "" when it does not run.
func webCheckNote(cfg config.Config) string {
	if !slices.Contains(cfg.Platforms(), web.Platform) {
		return ""
	}
	wc := config.SectionOf[web.Config](cfg, web.Platform)
	switch {
	case len(wc.Users) > 0 || wc.Token != "":
		return "# web chat: for the holders of channels.web.token and users\n"
	case wc.Open:
		return "# web chat: open to every account of this machine, without a token (channels.web.open: true)\n"
	}
	return "# web chat: for the holder of the token in " + filepath.Join(cfg.DataDir, webTokenFile) + " (made at the first start; the address with it is printed at start)\n"
}
