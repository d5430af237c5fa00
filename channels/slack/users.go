package slack

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// How the directory caches what it learns.
const (
	maxNames       = 2048
	nameTTL        = time.Hour
	nameFailTTL    = 5 * time.Minute // a failed users.info is not retried sooner
	groupsTTL      = 5 * time.Minute
	groupsRetry    = time.Minute // after a failed usergroups.list
	directoryCallT = 5 * time.Second
)

// directory knows people's display names (users.info, cached) and, when
// enabled, the user groups they belong to (usergroups.list, cached).
// Events carry only user ids; Author.Name is what the gateway shows
// ("chosen by Ann").
type directory struct {
	api    *slack.Client
	groups bool
	log    *slog.Logger
	// timeout bounds each call (directoryCallT; tests lengthen it).
	timeout time.Duration
	// limits, if set, holds users.info to its tier: beyond it, the
	// name is the event's hint, without a call.
	limits *limits

	mu       sync.Mutex // guards the fields below
	names    *lru[nameEntry]
	members  map[string][]string // user id → user group ids
	groupsAt time.Time           // when members is due for a refresh
}

type nameEntry struct {
	name    string
	expires time.Time
}

func newDirectory(api *slack.Client, groups bool, log *slog.Logger) *directory {
	return &directory{api: api, groups: groups, log: log, timeout: directoryCallT, names: newLRU[nameEntry](maxNames)}
}

// name returns the display name of user id: its display name, else its
// real name, else its handle (users.info, cached for an hour); hint, else
// the id, when Slack cannot say. It blocks on I/O when the name is not
// cached.
func (d *directory) name(ctx context.Context, id, hint string) string {
	if id == "" {
		return hint
	}
	now := time.Now()
	d.mu.Lock()
	e, ok := d.names.get(id)
	d.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.name
	}
	if d.limits != nil {
		if _, err := d.limits.take("users.info", "", now); err != nil {
			return firstNonEmpty(hint, id) // not remembered: asked again later
		}
	}
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	u, err := d.api.GetUserInfoContext(ctx, id)
	var name string
	ttl := nameTTL
	if err == nil {
		name = firstNonEmpty(u.Profile.DisplayName, u.RealName, u.Profile.RealName, u.Name)
	} else {
		d.log.Debug("slack: users.info failed; using the id or a hint", "user", id, "err", err)
		ttl = nameFailTTL
	}
	name = firstNonEmpty(name, hint, id)
	d.mu.Lock()
	d.names.put(id, nameEntry{name: name, expires: now.Add(ttl)})
	d.mu.Unlock()
	return name
}

// roles returns the ids of the user groups id belongs to, nil when user
// groups are off. It blocks on I/O when the membership list is due for a
// refresh (every five minutes).
func (d *directory) roles(ctx context.Context, id string) []string {
	if !d.groups || id == "" {
		return nil
	}
	now := time.Now()
	d.mu.Lock()
	due := !now.Before(d.groupsAt)
	if due {
		// Whoever comes next while the call runs uses the old list.
		d.groupsAt = now.Add(groupsRetry)
	}
	d.mu.Unlock()
	if due {
		d.refreshGroups(ctx, now)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.members[id]...)
}

// refreshGroups reloads the user group memberships. A failure keeps the
// old list and retries a minute later.
func (d *directory) refreshGroups(ctx context.Context, now time.Time) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	groups, err := d.api.GetUserGroupsContext(ctx, slack.GetUserGroupsOptionIncludeUsers(true))
	if err != nil {
		d.log.Warn("slack: usergroups.list failed; keeping the last membership list", "err", err)
		return
	}
	members := map[string][]string{}
	for _, g := range groups {
		for _, u := range g.Users {
			members[u] = append(members[u], g.ID)
		}
	}
	d.mu.Lock()
	d.members = members
	d.groupsAt = now.Add(groupsTTL)
	d.mu.Unlock()
}
