package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/typing"
	"github.com/acpgw/gateway/workspace"
	"github.com/go-playground/validator/v10"
)

// pathError is one problem with the value at a YAML path.
type pathError struct {
	path string // YAML path, e.g. acp.stream.metaMode
	msg  string // what is wrong, with the allowed values
}

func (e *pathError) Error() string { return e.path + ": " + e.msg }

func errorf(path, format string, args ...any) error {
	return &pathError{path: path, msg: fmt.Sprintf(format, args...)}
}

func asPathError(err error, pe **pathError) bool { return errors.As(err, pe) }

// Validate checks every field of cfg, the relations between fields, and
// every override merged over what it overrides. It returns all problems
// joined, each as "yaml.key: what is wrong" (nil when cfg is valid). It
// does no I/O.
func Validate(cfg Config) error {
	return joinSorted(validate(cfg))
}

func validate(cfg Config) []error {
	var errs []error
	errs = append(errs, validateStruct(cfg, "")...)
	errs = append(errs, checkTyping("typing", cfg.Typing)...)
	errs = append(errs, checkAgents(cfg.Agents)...)
	errs = append(errs, sectionErrors(checkAccess(cfg))...)
	errs = append(errs, sectionErrors(checkChannels(cfg))...)
	errs = append(errs, validateOverrides(cfg)...)
	errs = append(errs, cfg.Cluster.Check()...)
	return errs
}

// joinSorted joins errs sorted by text (so by path), dropping duplicates.
func joinSorted(errs []error) error {
	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	errs = slices.CompactFunc(errs, func(a, b error) bool { return a.Error() == b.Error() })
	return errors.Join(errs...)
}

var validate10 = newValidator()

func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		if n := strings.Split(f.Tag.Get("koanf"), ",")[0]; n != "" {
			return n
		}
		return f.Name
	})
	return v
}

// validateStruct runs the validate tags of v's fields, whose paths start
// with prefix.
func validateStruct(v any, prefix string) []error {
	err := validate10.Struct(v)
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		if err != nil {
			return []error{err}
		}
		return nil
	}
	var errs []error
	for _, fe := range ves {
		path := fe.Namespace()
		if _, rest, ok := strings.Cut(path, "."); ok {
			path = rest
		}
		errs = append(errs, &pathError{path: prefix + bracketsToDots(path), msg: describe(fe)})
	}
	return errs
}

// bracketsToDots turns map indexes into key segments (list[claude] →
// list.claude); list indexes stay ([0]).
func bracketsToDots(path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		j := strings.IndexByte(path[max(i, 0):], ']')
		if i < 0 || j < 0 {
			b.WriteString(path)
			return b.String()
		}
		j += i
		idx := path[i+1 : j]
		b.WriteString(path[:i])
		if _, err := strconv.Atoi(idx); err == nil {
			b.WriteString(path[i : j+1])
		} else {
			b.WriteString("." + idx)
		}
		path = path[j+1:]
	}
}

func describe(fe validator.FieldError) string {
	countable := fe.Kind() == reflect.Slice || fe.Kind() == reflect.Map
	switch fe.Tag() {
	case "oneof":
		return fmt.Sprintf("must be one of %s, got %q", fe.Param(), fmt.Sprint(fe.Value()))
	case "required":
		return "is required"
	case "min":
		if countable {
			return fmt.Sprintf("must have at least %s entries", fe.Param())
		}
		return fmt.Sprintf("must be at least %s, got %v", fe.Param(), fe.Value())
	case "max":
		if countable {
			return fmt.Sprintf("must have at most %s entries", fe.Param())
		}
		return fmt.Sprintf("must be at most %s, got %v", fe.Param(), fe.Value())
	}
	return fmt.Sprintf("fails %q (%s), got %v", fe.Tag(), fe.Param(), fe.Value())
}

// MaxTypingTTL is the largest typing.ttl (package typing sets no upper
// bound; a longer safety limit is no limit).
const MaxTypingTTL = 24 * time.Hour

func checkTyping(path string, t typing.Config) []error {
	if t.TTL > MaxTypingTTL {
		return []error{errorf(path+".ttl", "must be at most %v, got %v", MaxTypingTTL, t.TTL)}
	}
	return nil
}

var (
	agentName  = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
	envVarName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

func checkAgents(a Agents) []error {
	var errs []error
	if err := checkAgentName(a, "agents.default", a.Default); err != nil {
		errs = append(errs, err)
	}
	for _, name := range slices.Sorted(maps.Keys(a.List)) {
		path := "agents.list." + name
		if !agentName.MatchString(name) {
			errs = append(errs, errorf(path, "an agent name has only letters, digits, - and _"))
		}
		for _, k := range slices.Sorted(maps.Keys(a.List[name].Env)) {
			if !envVarName.MatchString(k) {
				errs = append(errs, errorf(path+".env."+k, "not an environment variable name (letters, digits and _, not starting with a digit)"))
			}
		}
		if why := workspace.CheckTemplate(a.List[name].WorkspaceDir); why != "" {
			errs = append(errs, errorf(path+".workspaceDir", "%s", why))
		}
		errs = append(errs, checkAgentSandbox(path, a.List[name])...)
		for i, k := range a.List[name].InheritEnv {
			if !envVarName.MatchString(strings.TrimSuffix(k, "*")) {
				errs = append(errs, errorf(fmt.Sprintf("%s.inheritEnv[%d]", path, i), "not an environment variable name (letters, digits and _, not starting with a digit; a trailing * matches any suffix), got %q", k))
			}
		}
		for i, k := range a.List[name].SecretEnv {
			if !envVarName.MatchString(strings.TrimSuffix(k, "*")) {
				errs = append(errs, errorf(fmt.Sprintf("%s.secretEnv[%d]", path, i), "not an environment variable name (letters, digits and _, not starting with a digit; a trailing * matches any suffix), got %q", k))
			}
		}
	}
	return errs
}

// checkAgentSandbox checks an agent's network policy and sandbox paths.
func checkAgentSandbox(path string, a AgentSpec) []error {
	var errs []error
	switch {
	case a.Network == "allow" && len(a.Allow) == 0:
		errs = append(errs, errorf(path+".allow", "network: allow needs at least one host:port here (network: none reaches nothing)"))
	case a.Network == "none" && len(a.Allow) > 0:
		errs = append(errs, errorf(path+".allow", "network: none reaches nothing; allow is for network: allow or full"))
	}
	for i, hp := range a.Allow {
		if why := checkHostPort(hp); why != "" {
			errs = append(errs, errorf(fmt.Sprintf("%s.allow[%d]", path, i), "%s, got %q", why, hp))
		}
	}
	abs := func(key, p string) {
		if p != "" && !filepath.IsAbs(p) {
			errs = append(errs, errorf(key, "must be an absolute path, got %q", p))
		}
	}
	abs(path+".sandbox.home", a.Sandbox.Home)
	for i, p := range a.Sandbox.ReadOnly {
		abs(fmt.Sprintf("%s.sandbox.readOnly[%d]", path, i), p)
	}
	for i, p := range a.Sandbox.ReadWrite {
		abs(fmt.Sprintf("%s.sandbox.readWrite[%d]", path, i), p)
	}
	return errs
}

// checkHostPort says what is wrong with a host:port destination ("" if
// nothing).
func checkHostPort(hp string) string {
	host, port, err := net.SplitHostPort(hp)
	if err != nil || host == "" {
		return "must be host:port (a name or an IP, [::1]:443 for IPv6)"
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "the port must be a number from 1 to 65535"
	}
	return ""
}

func checkAccess(cfg Config) []error {
	var errs []error
	names := cfg.Channels.names()
	on := cfg.Platforms()
	for _, p := range slices.Sorted(maps.Keys(cfg.Access)) {
		path := "access." + p
		if !slices.Contains(names, p) {
			errs = append(errs, errorf(path, "unknown platform (allowed: %s)", strings.Join(names, " ")))
			continue
		}
		r := reflect.ValueOf(cfg.Access[p])
		// A platform's words for its spaces and groups are keys of
		// every rule; they belong to that platform's rules only.
		for _, s := range cfg.Channels.sections {
			info := s.s.Info()
			for _, key := range []string{info.Spaces, info.Groups} {
				if key != "" && s.name != p && len(ruleList(r, key)) > 0 {
					errs = append(errs, errorf(path+"."+key, "only for %s", s.name))
				}
			}
		}
		sec, _ := cfg.Channels.Section(p)
		if ids, ok := sec.(idChecker); ok && slices.Contains(on, p) {
			for _, key := range []string{"users", "approvers"} {
				errs = append(errs, ids.CheckIDs("channels."+p, path+"."+key, ruleList(r, key))...)
			}
		}
	}
	return errs
}

// ruleList returns the list at key of an access rule, nil if it has none.
func ruleList(r reflect.Value, key string) []string {
	for _, f := range fieldsOf(r.Type()) {
		if f.name == key {
			l, _ := r.FieldByIndex(f.index).Interface().([]string)
			return l
		}
	}
	return nil
}

func checkChannels(cfg Config) []error {
	var errs []error
	if err := checkListen("metrics.listen", cfg.Metrics.Listen, true); err != nil {
		errs = append(errs, err)
	}
	on := cfg.Platforms()
	for _, s := range cfg.Channels.sections {
		path := "channels." + s.name
		errs = append(errs, validateStruct(s.s, path+".")...)
		errs = append(errs, s.s.Validate(path, slices.Contains(on, s.name))...)
	}
	if len(on) == 0 && len(cfg.Channels.sections) > 0 {
		hints := cfg.Channels.enableHints()
		fallback := false
		for _, s := range cfg.Channels.sections {
			if info := s.s.Info(); info.Fallback {
				fallback = true
				errs = append(errs, errorf(info.Enable, "is false and no other platform is configured (set %s)", hints))
			}
		}
		if !fallback {
			errs = append(errs, errorf("channels", "no platform is configured (set %s)", hints))
		}
	}
	return errs
}

// sectionErrors turns the sections' errors into path errors.
func sectionErrors(errs []error) []error {
	for i, err := range errs {
		var ce *channels.ConfigError
		if errors.As(err, &ce) {
			errs[i] = &pathError{path: ce.Key, msg: ce.Msg}
		}
	}
	return errs
}

func checkListen(path, addr string, optional bool) error {
	if addr == "" && optional {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return errorf(path, "want host:port (such as 127.0.0.1:8484), got %q", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errorf(path, "want a port number from 0 to 65535, got %q", port)
	}
	return nil
}

// checkAgentName checks that name, at path, names an agent of a.List or
// the demo agent ("" stands for the default).
func checkAgentName(a Agents, path, name string) error {
	if _, ok := a.List[name]; ok || name == DemoAgent || name == "" {
		return nil
	}
	names := append([]string{DemoAgent}, slices.Sorted(maps.Keys(a.List))...)
	return errorf(path, "must name an agent of agents.list or %s (defined: %s), got %q",
		DemoAgent, strings.Join(slices.Compact(names), " "), name)
}
