package config

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/acpgw/gateway/typing"
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
	errs = append(errs, validateStruct(cfg)...)
	errs = append(errs, checkTyping("typing", cfg.Typing)...)
	errs = append(errs, checkAgents(cfg.Agents)...)
	errs = append(errs, checkAccess(cfg)...)
	errs = append(errs, checkChannels(cfg)...)
	errs = append(errs, validateOverrides(cfg)...)
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

// validateStruct runs the validate tags of v's fields.
func validateStruct(v any) []error {
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
		errs = append(errs, &pathError{path: bracketsToDots(path), msg: describe(fe)})
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
		for i, k := range a.List[name].InheritEnv {
			if !envVarName.MatchString(strings.TrimSuffix(k, "*")) {
				errs = append(errs, errorf(fmt.Sprintf("%s.inheritEnv[%d]", path, i), "not an environment variable name (letters, digits and _, not starting with a digit; a trailing * matches any suffix), got %q", k))
			}
		}
	}
	return errs
}

func checkAccess(cfg Config) []error {
	var errs []error
	for _, p := range slices.Sorted(maps.Keys(cfg.Access)) {
		path := "access." + p
		if !slices.Contains(platforms, p) {
			errs = append(errs, errorf(path, "unknown platform (allowed: %s)", strings.Join(platforms, " ")))
			continue
		}
		r := cfg.Access[p]
		only := func(key, platform string, set bool) {
			if set && p != platform {
				errs = append(errs, errorf(path+"."+key, "only for %s", platform))
			}
		}
		only("guilds", PlatformDiscord, len(r.Guilds) > 0)
		only("roles", PlatformDiscord, len(r.Roles) > 0)
		only("workspaces", PlatformSlack, len(r.Workspaces) > 0)
		only("userGroups", PlatformSlack, len(r.UserGroups) > 0)
		if p == PlatformWeb && slices.Contains(cfg.Platforms(), PlatformWeb) {
			errs = append(errs, checkWebIDs(path+".users", r.Users, cfg.Channels.Web)...)
			errs = append(errs, checkWebIDs(path+".approvers", r.Approvers, cfg.Channels.Web)...)
		}
	}
	return errs
}

// checkWebIDs checks that the ids of an access.web list are ids the web
// chat gives: who someone is there comes from their token, not from what
// a request says.
func checkWebIDs(path string, ids []string, w Web) []error {
	var errs []error
	known := w.Identities()
	for i, id := range ids {
		if !slices.Contains(known, id) {
			errs = append(errs, errorf(fmt.Sprintf("%s[%d]", path, i),
				"%q is not a web chat identity; people there are who their token says (channels.web.users NAME: web:NAME, channels.web.token: %s, no token on loopback: %s), here: %s",
				id, WebOwner, WebLocal, strings.Join(known, " ")))
		}
	}
	return errs
}

func checkChannels(cfg Config) []error {
	var errs []error
	ch := cfg.Channels
	if err := checkListen("channels.web.listen", ch.Web.Listen, false); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, checkWebUsers(ch.Web)...)
	if slices.Contains(cfg.Platforms(), PlatformWeb) && ch.Web.Token == "" && len(ch.Web.Users) == 0 && !loopbackListen(ch.Web.Listen) {
		errs = append(errs, errorf("channels.web.listen", "%q is reachable beyond this machine, and no token is set: set channels.web.token or channels.web.users so that only token holders get in, or listen on 127.0.0.1", ch.Web.Listen))
	}
	if err := checkListen("metrics.listen", cfg.Metrics.Listen, true); err != nil {
		errs = append(errs, err)
	}
	if err := checkURL("channels.discord.apiBaseURL", ch.Discord.APIBaseURL); err != nil {
		errs = append(errs, err)
	}
	if err := checkURL("channels.slack.apiURL", ch.Slack.APIURL); err != nil {
		errs = append(errs, err)
	}
	s := ch.Slack
	switch {
	case s.AppToken != "" && s.BotToken == "":
		errs = append(errs, errorf("channels.slack.botToken", "is required when appToken is set"))
	case s.AppToken == "" && s.BotToken != "":
		errs = append(errs, errorf("channels.slack.appToken", "is required when botToken is set"))
	}
	// The messages never quote a token. A token still holding "${" had a
	// reference that could not be expanded, reported already.
	if s.AppToken != "" && !strings.HasPrefix(s.AppToken, "xapp-") && !strings.Contains(s.AppToken, "${") {
		errs = append(errs, errorf("channels.slack.appToken", `must be an app-level token (starting with "xapp-")`))
	}
	if s.BotToken != "" && !strings.HasPrefix(s.BotToken, "xoxb-") && !strings.Contains(s.BotToken, "${") {
		errs = append(errs, errorf("channels.slack.botToken", `must be a bot token (starting with "xoxb-")`))
	}
	if len(cfg.Platforms()) == 0 {
		errs = append(errs, errorf("channels.web.enabled", "is false and no other platform is configured (set channels.discord.token or the channels.slack tokens)"))
	}
	return errs
}

// checkWebUsers checks channels.web.users: names fit in an id, tokens are
// set and each person's own. No message quotes a token.
func checkWebUsers(w Web) []error {
	var errs []error
	owner := map[string]string{}
	if w.Token != "" {
		owner[w.Token] = "channels.web.token"
	}
	for _, name := range slices.Sorted(maps.Keys(w.Users)) {
		path := "channels.web.users." + name
		tok := w.Users[name]
		switch {
		case !agentName.MatchString(name):
			errs = append(errs, errorf(path, "a name has only letters, digits, - and _"))
		case name == "owner" || name == "local":
			errs = append(errs, errorf(path, "%q is reserved (web:%s is the id of %s); choose another name", name, name,
				map[string]string{"owner": "channels.web.token's holder", "local": "the local user without tokens"}[name]))
		}
		switch {
		case tok == "":
			errs = append(errs, errorf(path, "the token is empty; give each person a token of their own (normally ${%s_TOKEN})", strings.ToUpper(strings.ReplaceAll(name, "-", "_"))))
		case owner[tok] != "":
			errs = append(errs, errorf(path, "has the same token as %s; each person needs a token of their own", owner[tok]))
		default:
			owner[tok] = path
		}
	}
	return errs
}

// loopbackListen reports whether a listen address only accepts
// connections from this machine: localhost or a loopback IP.
func loopbackListen(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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

func checkURL(path, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errorf(path, "want an http or https URL, got %q", s)
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
