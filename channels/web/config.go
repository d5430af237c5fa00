package web

import (
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/acpgw/gateway/channels"
)

// Config is the web chat's configuration section (channels.web).
type Config struct {
	// Enabled turns the web chat on (true) or off (false). Unset (null),
	// it is on exactly when no other platform is configured.
	Enabled *bool `koanf:"enabled"`
	// Listen is the host:port the web chat serves on (default
	// 127.0.0.1:8484).
	Listen string `koanf:"listen"`
	// Token, when set, admits its holder, one person whose id for
	// access rules is web:owner (a secret; normally ${WEB_TOKEN}).
	Token string `koanf:"token" secret:"true"`
	// Users maps names (letters, digits, "-" and "_") to tokens: each
	// token admits one person, whose id for access rules is web:<name> and
	// whose name is shown as the author (secrets; normally
	// ${ANN_TOKEN}). Without Token and Users the web chat serves only on
	// loopback, to the one local user, web:local: the holder of the token
	// the gateway makes at its first start (DATADIR/web-token), or
	// everyone with Open.
	Users map[string]string `koanf:"users" secret:"true"`
	// Open serves the chat without any token (only on loopback, with
	// neither Token nor Users): every account of this machine is then
	// web:local and can prompt the agents. False (the default), the
	// gateway makes a token instead.
	Open bool `koanf:"open"`
	// MaxThreadsInMemory is how many threads keep their messages in
	// memory (default 200); the others are kept on disk beside the
	// state file and read back when used. It bounds memory, not the
	// number of threads: a new thread is never refused.
	MaxThreadsInMemory int `koanf:"maxThreadsInMemory"`
}

// DefaultConfig returns the section's defaults.
func DefaultConfig() Config {
	return Config{Listen: DefaultListen, MaxThreadsInMemory: defaultMaxThreadsInMemory}
}

// Info says what the configuration calls the web chat's places: it has
// neither spaces, nor groups, nor channels to override.
func (c Config) Info() channels.SectionInfo {
	return channels.SectionInfo{Enable: "channels.web.enabled", Fallback: true}
}

// On reports whether the web chat runs: as Enabled says, or, unset, when
// no other platform is on.
func (c Config) On(othersOn bool) bool {
	if c.Enabled != nil {
		return *c.Enabled
	}
	return !othersOn
}

// ShownTags are the stream tags the web chat shows unlike the other
// platforms, where it has room: thoughts (as collapsed cards) and the plan
// (pinned). A tag the operator sets in acp.stream.tagVisibility keeps the
// operator's value; overrides.web.settings go over both. source names
// them where an explanation says where a value came from.
func (c Config) ShownTags() (source string, tags []string) {
	return "the web chat's default", []string{"agent_thought_chunk", "plan"}
}

// Identities returns the ids the web chat gives people, sorted: web:<name>
// for each of Users, web:owner with Token, web:local with neither (the
// holder of the token the gateway makes, or everyone with Open). Access
// rules (access.web) can name only these.
func (c Config) Identities() []string {
	var ids []string
	for name := range c.Users {
		ids = append(ids, IDPrefix+name)
	}
	if c.Token != "" {
		ids = append(ids, OwnerID)
	}
	if len(ids) == 0 {
		ids = append(ids, LocalID)
	}
	slices.Sort(ids)
	return ids
}

// Validate checks the section at path (channels.web); on says whether the
// web chat runs. No message quotes a token.
func (c Config) Validate(path string, on bool) []error {
	var errs []error
	if err := checkListen(path+".listen", c.Listen); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.checkUsers(path)...)
	if c.MaxThreadsInMemory < 1 {
		errs = append(errs, configErrorf(path+".maxThreadsInMemory", "must be at least 1, got %d", c.MaxThreadsInMemory))
	}
	if c.Open && (c.Token != "" || len(c.Users) > 0) {
		errs = append(errs, configErrorf(path+".open", "true serves the chat without a token, but %s.token or %s.users is set: remove open, or the tokens", path, path))
	}
	if on && c.Token == "" && len(c.Users) == 0 && !loopbackListen(c.Listen) {
		errs = append(errs, configErrorf(path+".listen", "%q is reachable beyond this machine, and no token is set: set %s.token or %s.users so that only token holders get in, or listen on 127.0.0.1 (where the gateway makes a token, or %s.open serves without one)", c.Listen, path, path, path))
	}
	return errs
}

// CheckIDs checks that the ids of an access.web list (at key) are ids the
// web chat gives: who someone is there comes from their token, not from
// what a request says. path is the section's (channels.web).
func (c Config) CheckIDs(path, key string, ids []string) []error {
	var errs []error
	known := c.Identities()
	for i, id := range ids {
		if !slices.Contains(known, id) {
			errs = append(errs, configErrorf(fmt.Sprintf("%s[%d]", key, i),
				"%q is not a web chat identity; people there are who their token says (%s.users NAME: %sNAME, %s.token: %s, no token on loopback: %s), here: %s",
				id, path, IDPrefix, path, OwnerID, LocalID, strings.Join(known, " ")))
		}
	}
	return errs
}

var userName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// checkUsers checks users: names fit in an id, tokens are set and each
// person's own.
func (c Config) checkUsers(path string) []error {
	var errs []error
	owner := map[string]string{}
	if c.Token != "" {
		owner[c.Token] = path + ".token"
	}
	reserved := map[string]string{"owner": path + ".token's holder", "local": "the local user without tokens"}
	for _, name := range slices.Sorted(maps.Keys(c.Users)) {
		key := path + ".users." + name
		tok := c.Users[name]
		switch {
		case !userName.MatchString(name):
			errs = append(errs, configErrorf(key, "a name has only letters, digits, - and _"))
		case reserved[name] != "":
			errs = append(errs, configErrorf(key, "%q is reserved (%s%s is the id of %s); choose another name", name, IDPrefix, name, reserved[name]))
		}
		switch {
		case tok == "":
			errs = append(errs, configErrorf(key, "the token is empty; give each person a token of their own (normally ${%s_TOKEN})", strings.ToUpper(strings.ReplaceAll(name, "-", "_"))))
		case owner[tok] != "":
			errs = append(errs, configErrorf(key, "has the same token as %s; each person needs a token of their own", owner[tok]))
		default:
			owner[tok] = key
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

func checkListen(key, addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return configErrorf(key, "want host:port (such as 127.0.0.1:8484), got %q", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return configErrorf(key, "want a port number from 0 to 65535, got %q", port)
	}
	return nil
}

func configErrorf(key, format string, args ...any) error {
	return &channels.ConfigError{Key: key, Msg: fmt.Sprintf(format, args...)}
}
