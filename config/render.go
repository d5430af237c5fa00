package config

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/acpgw/gateway/projector"
	"go.yaml.in/yaml/v3"
)

// Mask replaces a secret's value in Redacted.
const Mask = "***"

// Redacted returns the effective configuration as YAML, keys in schema
// order, with every secret that is set replaced by Mask: the platforms'
// tokens (keeping a prefix that says what kind of token it is, see
// channels.SectionInfo.SecretPrefixes) and the values of
// agents.list.*.env. ${VAR} references are already expanded,
// so the text holds neither a secret nor a reference to one; a literal
// "${" is written "$${". Loaded again, the text gives the same
// configuration with the secrets masked. It does no I/O.
func Redacted(c Config) string {
	r := renderer{mask: true}
	for _, s := range c.Channels.sections {
		r.prefixes = append(r.prefixes, s.s.Info().SecretPrefixes...)
	}
	return r.render(r.node(reflect.ValueOf(c), "", false))
}

// Explain returns the effective acp.stream, typing, busy and permissions
// settings for a thread in scope s as YAML, each value commented with
// where it came from: "default", "file", "env GATEWAY_…", "--set", or the
// override's path (overrides.NAME.channels.1234). Tags of
// acp.stream.tagVisibility that are not configured are shown with their
// default. Sources are known for a Config from Load; for one built by hand
// every value reads "default" unless an override sets it. It does no I/O.
func Explain(c Config, s Scope) string {
	p := c.Policy(s)
	vis := projector.DefaultTagVisibility()
	maps.Copy(vis, p.Stream.TagVisibility)
	p.Stream.TagVisibility = vis
	if p.Agent == "" {
		p.Agent = DemoAgent // what AgentSpec starts for ""
	}
	b := overrideBody{ACP: streamOnly{Stream: p.Stream}, Typing: p.Typing, Busy: p.Busy, Permissions: p.Permissions, Reactions: p.Reactions, Agent: p.Agent, Budgets: p.Budgets, Context: p.Context}

	_, ls := c.layers(s)
	var sets []map[string]bool
	for _, l := range ls {
		set := map[string]bool{}
		for _, k := range flatKeys("", l.body) {
			set[k] = true
		}
		sets = append(sets, set)
	}
	var sources map[string]string
	if c.res != nil {
		sources = c.res.sources
	}
	r := renderer{comment: func(path string) string {
		for i := len(ls) - 1; i >= 0; i-- {
			if setsAt(sets[i], path) {
				return ls[i].path
			}
		}
		if path == "agent" {
			path = "agents.default" // the base of an override's agent
		}
		for p := path; p != ""; p = parent(p) {
			if src, ok := sources[p]; ok {
				return src
			}
		}
		return "default"
	}}
	var head strings.Builder
	fmt.Fprintf(&head, "# effective settings for %s\n", c.describeScope(s))
	if f := c.File(); f != "" {
		fmt.Fprintf(&head, "# file: %s\n", f)
	}
	return head.String() + r.render(r.node(reflect.ValueOf(b), "", false))
}

func (c Config) describeScope(s Scope) string {
	if s.Platform == "" {
		return "any thread (no platform given: base settings)"
	}
	parts := []string{s.Platform}
	if p, ok := c.Overrides.find(s.Platform); ok && p.info.Space != "" && s.Space != "" {
		parts = append(parts, p.info.Space+" "+s.Space)
	}
	if s.Channel != "" {
		parts = append(parts, "channel "+s.Channel)
	}
	return strings.Join(parts, ", ")
}

// setsAt reports whether a body with the flattened keys set gives the
// value at path (the key itself, or a map above it).
func setsAt(set map[string]bool, path string) bool {
	for p := path; p != ""; p = parent(p) {
		if set[p] {
			return true
		}
	}
	return false
}

func parent(path string) string {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return ""
	}
	return path[:i]
}

// renderer turns values into YAML nodes: structs by their koanf tags in
// field order, maps sorted by key.
type renderer struct {
	mask     bool                     // replace secrets with Mask
	prefixes []string                 // secrets' prefixes kept when masked
	comment  func(path string) string // line comment for a leaf, or nil
}

func (r renderer) render(n *yaml.Node) string {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return "# cannot render: " + err.Error() + "\n"
	}
	enc.Close()
	return buf.String()
}

func (r renderer) node(v reflect.Value, path string, secret bool) *yaml.Node {
	n := r.value(v, path, secret)
	if r.comment != nil && (n.Kind != yaml.MappingNode || len(n.Content) == 0) {
		n.LineComment = r.comment(path)
	}
	return n
}

func (r renderer) value(v reflect.Value, path string, secret bool) *yaml.Node {
	if !v.IsValid() {
		return scalar("!!null", "null")
	}
	if v.Type() == durationType {
		return scalar("!!str", fmt.Sprint(v.Interface()))
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return scalar("!!null", "null")
		}
		return r.value(v.Elem(), path, secret)
	case reflect.Struct:
		if view, ok := asView(v); ok {
			v = view
		}
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, f := range fieldsOf(v.Type()) {
			n.Content = append(n.Content, scalar("!!str", f.name),
				r.node(v.FieldByIndex(f.index), join(path, f.name), f.secret))
		}
		return n
	case reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		for _, k := range keys {
			ks := fmt.Sprint(k.Interface())
			n.Content = append(n.Content, scalar("!!str", ks), r.node(v.MapIndex(k), join(path, ks), secret))
		}
		if len(n.Content) == 0 {
			n.Style = yaml.FlowStyle
		}
		return n
	case reflect.Slice, reflect.Array:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for i := range v.Len() {
			e := r.value(v.Index(i), fmt.Sprintf("%s[%d]", path, i), secret)
			if e.Kind != yaml.ScalarNode {
				n.Style = 0
			}
			n.Content = append(n.Content, e)
		}
		return n
	case reflect.String:
		s := v.String()
		switch {
		case secret && r.mask && s != "":
			s = maskSecret(s, r.prefixes)
		case r.mask:
			// The text is a configuration: a literal "${" is written
			// as "$${" so that it loads back as itself.
			s = strings.ReplaceAll(s, "${", "$${")
		}
		return scalar("!!str", s)
	case reflect.Bool:
		return scalar("!!bool", strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return scalar("!!int", strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return scalar("!!int", strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		return scalar("!!float", strconv.FormatFloat(v.Float(), 'g', -1, 64))
	}
	return scalar("!!str", fmt.Sprint(v.Interface()))
}

// maskSecret returns Mask, after the one of prefixes that s starts with,
// which says what the secret is without giving it away.
func maskSecret(s string, prefixes []string) string {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return p + Mask
		}
	}
	return Mask
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}
