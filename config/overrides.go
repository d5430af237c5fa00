package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/session"
	"github.com/acpgw/gateway/typing"
)

// Body is a partial override: a nested map holding some of the keys of
// acp.stream, typing, busy and permissions, in the same shape as at the top
// of the file (for example {"acp": {"stream": {"metaMode": "off"}}}), and
// agent (the agent of new threads there, like agents.default). Only the
// keys it holds change.
type Body map[string]any

// overrideBody is the shape of what a Body may hold, and the result of
// merging bodies over the base settings.
type overrideBody struct {
	ACP         streamOnly               `koanf:"acp"`
	Typing      typing.Config            `koanf:"typing"`
	Busy        string                   `koanf:"busy" validate:"oneof=queue interrupt"`
	Permissions session.PermissionConfig `koanf:"permissions"`
	Reactions   session.Reactions        `koanf:"reactions"`
	// Agent is the agent of new threads here (agents.default at the top).
	Agent string `koanf:"agent"`
	// Budgets are the budgets here.
	Budgets session.Budgets `koanf:"budgets"`
	// Context is the context section (context.backfill).
	Context session.Context `koanf:"context"`
}

type streamOnly struct {
	Stream projector.Settings `koanf:"stream"`
}

func (b overrideBody) policy() session.Policy {
	return session.Policy{Stream: b.ACP.Stream, Typing: b.Typing, Busy: b.Busy, Permissions: b.Permissions, Agent: b.Agent, Reactions: b.Reactions, Budgets: b.Budgets, Context: b.Context}
}

// Scope says where a thread is, to find the overrides that apply to it.
type Scope struct {
	// Platform is the platform's name.
	Platform string
	// Space is the id of the platform's space (a server, as the platform
	// calls it), if it has them.
	Space string
	// Channel is the channel id; for a thread inside a channel, that
	// channel.
	Channel string
}

// layer is one override body that applies to a scope.
type layer struct {
	path string // YAML path of the body, e.g. overrides.NAME.settings
	body Body
}

// scopeKey identifies a combination of applicable layers.
type scopeKey struct{ platform, space, channel string }

// layers returns the bodies that apply to s, least specific first, and the
// key identifying that combination.
func (c Config) layers(s Scope) (scopeKey, []layer) {
	p, ok := c.Overrides.find(s.Platform)
	if !ok {
		return scopeKey{}, nil
	}
	key := scopeKey{platform: s.Platform}
	base := "overrides." + s.Platform + "."
	var ls []layer
	if l, ok := c.shownTags(s.Platform); ok {
		ls = append(ls, l)
	}
	ls = append(ls, layer{base + "settings", p.o.Settings})
	if b, ok := p.o.Spaces[s.Space]; ok && s.Space != "" {
		key.space = s.Space
		ls = append(ls, layer{base + p.info.Spaces + "." + s.Space, b})
	}
	if b, ok := p.o.Channels[s.Channel]; ok && s.Channel != "" {
		key.channel = s.Channel
		ls = append(ls, layer{base + "channels." + s.Channel, b})
	}
	return key, ls
}

// shownTags is the layer of the platform's own defaults: the stream tags
// it shows where the others have no room (see tagShower). A tag the
// operator sets in acp.stream.tagVisibility keeps the operator's value;
// the platform's overrides go over both.
func (c Config) shownTags(platform string) (layer, bool) {
	sec, _ := c.Channels.Section(platform)
	ts, ok := sec.(tagShower)
	if !ok {
		return layer{}, false
	}
	source, tags := ts.ShownTags()
	vis := map[string]any{}
	for _, tag := range tags {
		if _, set := c.ACP.Stream.TagVisibility[tag]; !set {
			vis[tag] = true
		}
	}
	if len(vis) == 0 {
		return layer{}, false
	}
	return layer{source, Body{"acp": map[string]any{"stream": map[string]any{"tagVisibility": vis}}}}, true
}

// Policy returns the effective acp.stream, typing, busy and permissions
// settings for a thread in scope s: the base settings with the overrides
// that apply merged over them, the most specific last. It does no I/O and
// is cheap for a Config from Load (the results are precomputed or cached).
// The result is the caller's to keep. It is safe for concurrent use. For a
// Config that does not validate, an override that cannot be decoded is
// skipped.
func (c Config) Policy(s Scope) session.Policy {
	key, ls := c.layers(s)
	if c.res != nil {
		if p, ok := c.res.policy(key); ok {
			return clonePolicy(p)
		}
	}
	var p session.Policy
	if len(ls) == 0 || allEmpty(ls) {
		p = c.basePolicy()
	} else {
		p = resolveLenient(c, ls)
	}
	if c.res != nil {
		c.res.store(key, p)
	}
	return clonePolicy(p)
}

func allEmpty(ls []layer) bool {
	for _, l := range ls {
		if len(l.body) > 0 {
			return false
		}
	}
	return true
}

func (c Config) basePolicy() session.Policy {
	return session.Policy{Stream: c.ACP.Stream, Typing: c.Typing, Busy: c.Busy, Permissions: c.Permissions, Agent: c.Agents.Default, Reactions: c.Reactions, Budgets: c.Budgets, Context: c.Context}
}

func clonePolicy(p session.Policy) session.Policy {
	p.Stream.TagVisibility = maps.Clone(p.Stream.TagVisibility)
	return p
}

// baseBody returns c's overridable sections as a nested map.
func (c Config) baseBody() map[string]any {
	b := overrideBody{
		ACP:         streamOnly{Stream: c.ACP.Stream},
		Typing:      c.Typing,
		Busy:        c.Busy,
		Permissions: c.Permissions,
		Reactions:   c.Reactions,
		Agent:       c.Agents.Default,
		Budgets:     c.Budgets,
		Context:     c.Context,
	}
	return plain(reflect.ValueOf(b)).(map[string]any)
}

// resolve merges the layers over c's base settings and decodes the result.
func resolve(c Config, ls []layer) (overrideBody, error) {
	m := c.baseBody()
	for _, l := range ls {
		mergeInto(m, l.body)
	}
	var out overrideBody
	err := decode(m, &out)
	return out, err
}

// resolveLenient is resolve, skipping the layers that do not decode.
func resolveLenient(c Config, ls []layer) session.Policy {
	m := c.baseBody()
	var out overrideBody
	if err := decode(m, &out); err != nil {
		return c.basePolicy()
	}
	for _, l := range ls {
		try := deepCopy(m)
		mergeInto(try, l.body)
		var next overrideBody
		if decode(try, &next) == nil {
			m, out = try, next
		}
	}
	return out.policy()
}

// resolved is what Load precomputes.
type resolved struct {
	file    string            // the file read, "" if none
	sources map[string]string // flat key → where its value came from
	// secretVars are the variables the secret settings referenced.
	secretVars []string
	// secretFiles are the files secret settings were read from.
	secretFiles []string

	mu       sync.Mutex // guards policies
	policies map[scopeKey]session.Policy
}

func (r *resolved) policy(k scopeKey) (session.Policy, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.policies[k]
	return p, ok
}

func (r *resolved) store(k scopeKey, p session.Policy) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.policies[k] = p
}

// precompute fills r.policies with the base, every platform, and every
// single space and channel override. Combinations of a space and
// a channel override are cached on first use.
func (r *resolved) precompute(c Config) {
	r.policies = map[scopeKey]session.Policy{{}: c.basePolicy()}
	add := func(s Scope) {
		k, ls := c.layers(s)
		r.policies[k] = resolveLenient(c, ls)
	}
	for _, p := range c.Overrides.platforms {
		add(Scope{Platform: p.name})
		for id := range p.o.Spaces {
			add(Scope{Platform: p.name, Space: id})
		}
		for id := range p.o.Channels {
			add(Scope{Platform: p.name, Channel: id})
		}
	}
}

// overrideLayers lists every override body with its path, sorted by path,
// each with the layers it is merged over (the platform's settings for a
// space or channel body).
func (c Config) overrideLayers() [][]layer {
	var out [][]layer
	for _, p := range c.Overrides.platforms {
		_, platform := c.layers(Scope{Platform: p.name}) // built-in defaults, then settings
		out = append(out, platform)
		settings := platform[len(platform)-1]
		base := "overrides." + p.name + "."
		for _, id := range slices.Sorted(maps.Keys(p.o.Spaces)) {
			out = append(out, []layer{settings, {base + p.info.Spaces + "." + id, p.o.Spaces[id]}})
		}
		for _, id := range slices.Sorted(maps.Keys(p.o.Channels)) {
			out = append(out, []layer{settings, {base + "channels." + id, p.o.Channels[id]}})
		}
	}
	return out
}

// validateOverrides checks every override body: its keys, and the result
// of merging it over what it overrides. Problems are reported only for the
// keys the body sets (the base's own are reported at their own paths).
func validateOverrides(c Config) []error {
	var errs []error
	for _, ls := range c.overrideLayers() {
		l := ls[len(ls)-1]
		if len(l.body) == 0 {
			continue
		}
		keys := flatKeys("", l.body)
		bad := false
		for _, k := range keys {
			if err := checkBodyKey(l.path, k); err != nil {
				errs = append(errs, err)
				bad = true
			}
		}
		if bad {
			continue
		}
		b, err := resolve(c, ls)
		var problems []error
		if err != nil {
			// A value that did not decode is left zero: validating it
			// would report it twice.
			problems = decodeErrors(err)
		} else {
			problems = append(validateStruct(b, ""), checkTyping("typing", b.Typing)...)
			if err := checkAgentName(c.Agents, "agent", b.Agent); err != nil {
				problems = append(problems, err)
			}
		}
		for _, p := range problems {
			var pe *pathError
			if asPathError(p, &pe) && setsPath(keys, pe.path) {
				errs = append(errs, &pathError{path: l.path + "." + pe.path, msg: pe.msg})
			}
		}
	}
	return errs
}

// checkBodyKey checks one flattened key of the body at path.
func checkBodyKey(path, key string) error {
	if knownIn(key, bodyKeys) {
		return nil
	}
	top, _, _ := strings.Cut(key, ".")
	if top != "typing" && top != "busy" && top != "permissions" && top != "reactions" && top != "agent" && top != "budgets" && top != "context" && !strings.HasPrefix(key+".", "acp.stream.") {
		return fmt.Errorf("%s.%s: cannot be overridden (only acp.stream, typing, busy, permissions, reactions, budgets, agent and context can)", path, key)
	}
	return unknownKey(path+".", key, bodyKeys)
}

// setsPath reports whether a body with these flattened keys sets the value
// at path (or something inside or above it).
func setsPath(keys []string, path string) bool {
	for _, k := range keys {
		if k == path || strings.HasPrefix(path, k+".") || strings.HasPrefix(k, path+".") {
			return true
		}
	}
	return false
}

// flatKeys lists the leaf keys of m under prefix (an empty map is a leaf).
func flatKeys(prefix string, m map[string]any) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		key := prefix + k
		if sub, ok := asMap(m[k]); ok && len(sub) > 0 {
			out = append(out, flatKeys(key+".", sub)...)
			continue
		}
		out = append(out, key)
	}
	return out
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case Body:
		return m, true
	}
	return nil, false
}

// mergeInto merges src into dst: maps key by key, anything else replaced.
// It copies src's maps, so dst never shares them.
func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := asMap(v); ok {
			if dm, ok := asMap(dst[k]); ok {
				mergeInto(dm, sm)
				continue
			}
			dst[k] = deepCopy(sm)
			continue
		}
		dst[k] = v
	}
}

func deepCopy(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sm, ok := asMap(v); ok {
			v = deepCopy(sm)
		}
		out[k] = v
	}
	return out
}

// plain turns a value into the generic shape decode accepts: a struct
// into a map by its koanf tags, a map into map[string]any, a slice into
// []any; durations stay durations.
func plain(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Invalid:
		return nil
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return plain(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		for _, f := range fieldsOf(v.Type()) {
			m[f.name] = plain(v.FieldByIndex(f.index))
		}
		return m
	case reflect.Map:
		if v.IsNil() {
			return nil
		}
		m := make(map[string]any, v.Len())
		for it := v.MapRange(); it.Next(); {
			m[fmt.Sprint(it.Key().Interface())] = plain(it.Value())
		}
		return m
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		s := make([]any, v.Len())
		for i := range s {
			s[i] = plain(v.Index(i))
		}
		return s
	}
	return v.Interface()
}
