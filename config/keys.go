package config

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
)

// Key paths are YAML keys joined with "."; in a pattern, a "*" segment
// stands for any one map key (an agent name, a channel id, ...).

// bodyKeys are the keys allowed inside an override body, relative to it,
// sorted.
var bodyKeys = func() []string {
	keys := keysOf(reflect.TypeFor[overrideBody](), "", nil)
	slices.Sort(keys)
	return keys
}()

// keyCache holds the key sets of the platform sets seen, by
// platformsKey.
var keyCache sync.Map

// keysFor returns the keys of c's shape (its platforms' sections).
func keysFor(c Config) *keySet {
	id := platformsKey(c)
	if ks, ok := keyCache.Load(id); ok {
		return ks.(*keySet)
	}
	ks, _ := keyCache.LoadOrStore(id, buildKeys(c))
	return ks.(*keySet)
}

// platformsKey identifies the shape of c: its platforms' names and types.
func platformsKey(c Config) string {
	var b strings.Builder
	for _, s := range c.Channels.sections {
		fmt.Fprintf(&b, "%s=%s.%s;", s.name, reflect.TypeOf(s.s).PkgPath(), reflect.TypeOf(s.s).String())
	}
	return b.String()
}

type keySet struct {
	// doc are the documented keys, sorted: Keys.
	doc []string
	// bodies are the patterns where an override body sits
	// (overrides.NAME.settings, overrides.NAME.channels.*, ...).
	bodies map[string]bool
	// full are doc with every body position expanded by body: every leaf
	// a value can be given for (used to map environment variables onto
	// keys).
	full []string
}

// buildKeys lists the keys of c's shape: its types, and for the sections
// whose shape comes from the platforms (composite), their views.
func buildKeys(c Config) *keySet {
	ks := &keySet{bodies: map[string]bool{}}
	v := reflect.ValueOf(c)
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		t := fv.Type()
		if view, ok := asView(fv); ok {
			t = view.Type()
		}
		ks.doc = append(ks.doc, keysOfType(t, f.name, ks.bodies)...)
	}
	slices.Sort(ks.doc)
	for _, k := range ks.doc {
		if !ks.bodies[k] {
			ks.full = append(ks.full, k)
			continue
		}
		for _, b := range bodyKeys {
			ks.full = append(ks.full, k+"."+b)
		}
	}
	slices.Sort(ks.full)
	return ks
}

// Keys lists every documented key of a configuration with the platforms
// given, sorted. A "*" segment is a map key (an agent name, a platform, a
// space or channel id ...). An override body position
// (overrides.NAME.settings, overrides.NAME.channels.*, ...) is listed as
// one key: its body holds acp.stream, typing, busy, permissions and agent
// keys.
func Keys(platforms ...Platform) []string {
	return slices.Clone(keysFor(defaults(lookupIn(nil), platforms)).doc)
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	bodyType     = reflect.TypeFor[Body]()
)

// keysOf lists the key patterns of t's fields under prefix. Body-typed
// positions are leaves, recorded in bodies when it is not nil.
func keysOf(t reflect.Type, prefix string, bodies map[string]bool) []string {
	var keys []string
	for _, f := range fieldsOf(t) {
		keys = append(keys, keysOfType(t.FieldByIndex(f.index).Type, prefix+f.name, bodies)...)
	}
	return keys
}

func keysOfType(t reflect.Type, key string, bodies map[string]bool) []string {
	switch {
	case t == bodyType:
		if bodies != nil {
			bodies[key] = true
		}
		return []string{key}
	case t.Kind() == reflect.Struct && t != durationType:
		return keysOf(t, key+".", bodies)
	case t.Kind() == reflect.Map:
		return keysOfType(t.Elem(), key+".*", bodies)
	}
	return []string{key}
}

// match reports whether key matches the pattern segment by segment.
func match(pattern, key []string) bool {
	if len(pattern) != len(key) {
		return false
	}
	return matchPrefix(pattern, key)
}

// matchPrefix reports whether key's segments match the first len(key)
// segments of pattern.
func matchPrefix(pattern, key []string) bool {
	if len(key) > len(pattern) {
		return false
	}
	for i, s := range key {
		if pattern[i] != "*" && pattern[i] != s {
			return false
		}
	}
	return true
}

// knownIn reports whether key is a leaf of one of the patterns, or a
// node above one (an empty map or a null).
func knownIn(key string, patterns []string) bool {
	segs := strings.Split(key, ".")
	for _, p := range patterns {
		if matchPrefix(strings.Split(p, "."), segs) {
			return true
		}
	}
	return false
}

// underLeaf reports whether a proper prefix of key is a leaf of the
// patterns (a map given where a scalar or list belongs: a decode error
// reports it).
func underLeaf(key string, patterns []string) bool {
	segs := strings.Split(key, ".")
	for _, p := range patterns {
		ps := strings.Split(p, ".")
		if len(ps) < len(segs) && match(ps, segs[:len(ps)]) {
			return true
		}
	}
	return false
}

// underBody reports whether key is at or under an override body position
// of ks.
func (ks *keySet) underBody(key string) bool {
	segs := strings.Split(key, ".")
	for p := range ks.bodies {
		ps := strings.Split(p, ".")
		if len(segs) >= len(ps) && matchPrefix(ps, segs[:len(ps)]) {
			return true
		}
	}
	return false
}

// unknownKey reports key, relative to prefix, as unknown with the closest
// of the patterns as a suggestion.
func unknownKey(prefix, key string, patterns []string) error {
	if s := suggest(key, patterns); s != "" {
		return fmt.Errorf("%s%s: unknown key (did you mean %s%s?)", prefix, key, prefix, s)
	}
	return fmt.Errorf("%s%s: unknown key", prefix, key)
}

// suggest returns the known key closest to key, or "" when none is close.
// A candidate differs from key in exactly one segment (patterns are cut to
// key's length and their "*" segments filled from key), by a small edit
// distance, ignoring case.
func suggest(key string, patterns []string) string {
	segs := strings.Split(key, ".")
	best, bestD := "", -1
	for _, p := range patterns {
		ps := strings.Split(p, ".")
		if len(ps) < len(segs) {
			continue
		}
		ps = ps[:len(segs)]
		diff := -1
		for i := range ps {
			if ps[i] == "*" {
				ps[i] = segs[i]
			}
			if ps[i] != segs[i] {
				if diff >= 0 {
					diff = -2
					break
				}
				diff = i
			}
		}
		if diff < 0 {
			continue
		}
		d := distance(strings.ToLower(segs[diff]), strings.ToLower(ps[diff]))
		if d > max(1, len(segs[diff])/3) {
			continue
		}
		if cand := strings.Join(ps, "."); bestD < 0 || d < bestD || d == bestD && cand < best {
			best, bestD = cand, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// field is a struct field with a koanf name.
type field struct {
	name   string
	index  []int
	secret bool
}

// fieldsOf lists t's exported fields that have a koanf name, in order.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for f := range t.Fields() {
		name := strings.Split(f.Tag.Get("koanf"), ",")[0]
		if name == "" || !f.IsExported() {
			continue
		}
		out = append(out, field{name: name, index: f.Index, secret: f.Tag.Get("secret") == "true"})
	}
	return out
}
