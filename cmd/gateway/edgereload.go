package main

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/sysmsg"
)

// edgeSettings are what an edge takes from its configuration at run time:
// the access rules its Discord adapter asks before a mention opens a
// thread, and the agents the web chat offers a new thread. A reload
// replaces them; what the edge read at start (platform tokens, listen
// addresses, the cluster) is named in the log instead.
type edgeSettings struct {
	start     config.Config // the configuration the edge started with
	platforms []string      // the platforms it serves
	open      []string      // those that admit people themselves
	log       *slog.Logger
	access    atomic.Pointer[map[string]session.AccessRule]
	webs      []*web.Adapter // set before watch
}

func newEdgeSettings(cfg config.Config, log *slog.Logger) *edgeSettings {
	ps := cfg.Platforms()
	s := &edgeSettings{start: cfg, platforms: ps, open: openPlatforms(ps), log: log}
	s.access.Store(&cfg.Access)
	return s
}

// admit answers the Discord and Slack adapters' question by the current
// rules (session.MayPrompt), and tells a refused person why, privately
// where the platform can (in.Reply), as gateway run's router does: the
// event goes no further, so no worker will.
func (s *edgeSettings) admit(ctx context.Context, in channels.Inbound) bool {
	if session.MayPrompt(*s.access.Load(), s.open, in) {
		return true
	}
	s.log.Info("message refused by the access policy", "thread", in.Thread, "user", in.Author.ID)
	if in.Reply != nil {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := in.Reply(ctx, sysmsg.RefuseAccess.Body()); err != nil {
			s.log.Debug("cannot tell a refused person why", "err", err)
		}
	}
	return false
}

// watch reloads the configuration file when it changes, as gateway run
// and gateway worker do, until ctx ends; stop ends it and waits.
func (s *edgeSettings) watch(ctx context.Context, f runFlags) (stop func()) {
	path := s.start.File()
	if path == "" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		o := f.options()
		o.Path = path
		err := config.WatchReady(ctx, o, s.reload, func(err error) {
			s.log.Error("configuration change rejected; keeping the running settings", "err", err)
		}, func() { s.log.Info("watching the configuration file for changes", "file", path) })
		if err != nil && ctx.Err() == nil {
			s.log.Warn("configuration is not watched for changes", "err", err)
		}
	})
	return func() { cancel(); wg.Wait() }
}

// reload applies the access rules and the web chat's agents, and names
// the changed settings the edge read at start, which take a restart.
func (s *edgeSettings) reload(c config.Config) {
	logScrubbed(s.log, scrubEnv(c))
	s.access.Store(&c.Access)
	for _, w := range s.webs {
		w.SetAgents(pickable(c))
	}
	if keys := edgeRestartKeys(s.start, c, s.platforms); len(keys) > 0 {
		s.log.Warn("configuration changes that take effect at the next start of the edge", "keys", strings.Join(keys, ", "))
	}
	s.log.Info("configuration reloaded")
}

// edgeReads are the settings an edge reads at start and keeps, with the
// platforms' sections (the rest are the workers', channels.catchUp too,
// or applied on reload: access, agents).
var edgeReads = []string{"dataDir", "log", "metrics", "cluster"}

// edgeRestartKeys are the settings changed from a to b that an edge
// serving the platforms served applies only when it starts: edgeReads and
// the platforms' sections, the guilds Discord's commands are registered
// in, and whether Slack looks up user groups.
func edgeRestartKeys(a, b config.Config, served []string) []string {
	reads := slices.Clone(edgeReads)
	for _, p := range platforms() {
		reads = append(reads, "channels."+p.Name)
	}
	keys := restartKeys(a, b, reads, nil)
	if slices.Contains(served, "discord") && !slices.Equal(a.Access["discord"].Guilds, b.Access["discord"].Guilds) {
		keys = append(keys, "access.discord.guilds")
	}
	if slices.Contains(served, "slack") && usesUserGroups(a) != usesUserGroups(b) {
		keys = append(keys, "access.slack.userGroups")
	}
	return keys
}
