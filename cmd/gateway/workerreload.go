package main

import (
	"context"
	"reflect"
	"slices"
	"strings"

	"github.com/acpgw/gateway/config"
)

// watchConfig reloads the worker's configuration file when it changes,
// as gateway run does, until ctx ends.
func (w *worker) watchConfig(ctx context.Context, f roleFlags) {
	path := w.cfg.File()
	if path == "" {
		return
	}
	w.bg.Go(func() {
		o := f.options()
		o.Path = path
		err := config.Watch(ctx, o, w.reload, func(err error) {
			w.log.Error("configuration change rejected; keeping the running settings", "err", err)
		})
		if err != nil && ctx.Err() == nil {
			w.log.Warn("configuration is not watched for changes", "err", err)
		}
	})
}

// reload applies what a worker can change without a restart, as
// gateway run's reload does (the stream, typing, busy, permission,
// reaction, budget and context policies, stop words, access, the agents
// and the workspace settings), announces the agents it can run now, and
// names the changed settings that take a restart.
func (w *worker) reload(c config.Config) {
	logScrubbed(w.log, scrubEnv(c))
	w.router.Configure(routerSettings(c, w.deny))
	w.spaces.SetKeep(c.Workspace.Keep)
	if err := c.CheckDirs(); err != nil {
		w.log.Warn("an agent cannot start", "err", err)
	}
	if err := w.cluster.SetAgents(context.Background(), workerAgents(c)); err != nil {
		w.log.Warn("cannot announce the agents this worker runs now; the next announcement will", "err", err)
	}
	if keys := workerRestartKeys(w.cfg, c); len(keys) > 0 {
		w.log.Warn("configuration changes that take effect at the next start of the worker", "keys", strings.Join(keys, ", "))
	}
	w.log.Info("configuration reloaded")
}

// reloadable are the settings (and sections) a worker applies on reload.
var reloadable = []string{
	"acp.stream", "typing", "abort", "permissions", "busy", "reactions", "budgets", "context",
	"agents.default", "agents.list", "workspace", "access", "overrides",
}

// workerRestartKeys are the settings changed from a to b that a worker
// applies only when it starts: all but the reloadable ones and the
// platforms' sections, which are the edges' (a worker holds no platform
// connection).
func workerRestartKeys(a, b config.Config) []string {
	skip := slices.Clone(reloadable)
	for _, p := range platforms() {
		skip = append(skip, "channels."+p.Name)
	}
	return restartKeys(a, b, nil, skip)
}

// restartKeys are the keys whose values differ between a and b, that a
// role reads (under one of reads; nil: under any) and that its reload does
// not apply (under none of applied).
func restartKeys(a, b config.Config, reads, applied []string) []string {
	under := func(k string, prefixes []string) bool {
		for _, p := range prefixes {
			if k == p || strings.HasPrefix(k, p+".") {
				return true
			}
		}
		return false
	}
	var keys []string
	for _, k := range changedKeys("", reflect.ValueOf(a), reflect.ValueOf(b)) {
		if (reads == nil || under(k, reads)) && !under(k, applied) {
			keys = append(keys, k)
		}
	}
	return keys
}

// changedKeys walks two values of one struct type by their koanf tags and
// returns the keys of the fields that differ (a map or a list is one
// value). The platforms' sections under channels are walked too.
func changedKeys(prefix string, a, b reflect.Value) []string {
	var keys []string
	if ca, ok := a.Interface().(config.Channels); ok {
		cb := b.Interface().(config.Channels)
		for _, p := range platforms() {
			sa, _ := ca.Section(p.Name)
			sb, _ := cb.Section(p.Name)
			switch {
			case (sa == nil) != (sb == nil):
				keys = append(keys, prefix+"."+p.Name)
			case sa != nil:
				keys = append(keys, changedKeys(prefix+"."+p.Name, reflect.ValueOf(sa), reflect.ValueOf(sb))...)
			}
		}
	}
	if a.Kind() != reflect.Struct {
		if reflect.DeepEqual(a.Interface(), b.Interface()) {
			return nil
		}
		return []string{prefix}
	}
	for i := range a.NumField() {
		f := a.Type().Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("koanf"), ",")
		if !f.IsExported() || tag == "" || tag == "-" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		keys = append(keys, changedKeys(key, a.Field(i), b.Field(i))...)
	}
	return keys
}
