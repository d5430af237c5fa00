package agent

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// BaseEnv names the variables of the gateway's environment every agent
// gets; a trailing "*" matches any suffix. It is what a program needs to
// run as the gateway's user on this machine, and nothing that is a
// credential by its nature:
//   - PATH, HOME, USER, LOGNAME, SHELL: find programs, the agent's own
//     login (~/.claude, ~/.codex) and the shell its tools run in;
//   - LANG, LANGUAGE, LC_*, TZ, TERM: text encoding, time and the
//     terminal type the agent's tools assume;
//   - TMPDIR and the XDG base directories: where the agent keeps its files
//     when the machine moved them;
//   - the proxy variables and SSL_CERT_FILE, SSL_CERT_DIR,
//     NODE_EXTRA_CA_CERTS: how the machine reaches the network, which an
//     agent behind a corporate proxy needs to reach its model.
//
// Anything else (NODE_OPTIONS, npm_config_*, API keys) is passed only
// when an agent's configuration lists it (Spec.InheritEnv) or sets it
// (Spec.Env).
var BaseEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL",
	"LANG", "LANGUAGE", "LC_*", "TZ", "TERM",
	"TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

// minSecretSubstring is the shortest secret also looked for inside a
// longer value (a token in "Authorization=Bot <token>"); a shorter one
// only matches a whole value, so that it cannot knock out PATH by chance.
const minSecretSubstring = 16

// Why a variable is withheld (Withheld.Why).
const (
	whyName  = "its name is where the gateway's own secrets are kept (a platform's token, GATEWAY_*), so it is never passed on"
	whyValue = "its value is a secret of the gateway (a token) or of another agent (a variable named like a key, or listed in its secretEnv)"
)

// Withheld is a variable Environ kept from the agent.
type Withheld struct {
	// Name is the variable's name (never its value).
	Name string
	// Why says which rule withheld it.
	Why string
}

// Environ returns the environment of the agent, built from parent (the
// gateway's environment, "KEY=VALUE" entries): the variables named by
// BaseEnv and s.InheritEnv, then s.Env over them, and PWD set to s.Dir
// when that is an absolute path. A variable whose value holds one of s.Secrets, or an
// inherited one whose name matches s.SecretNames, is left out and
// reported in withheld (in the order met). It does no I/O.
func (s Spec) Environ(parent []string) (env []string, withheld []Withheld) {
	secret := func(v string) bool {
		for _, sec := range s.Secrets {
			if sec == "" {
				continue
			}
			if v == sec || (len(sec) >= minSecretSubstring && strings.Contains(v, sec)) {
				return true
			}
		}
		return false
	}
	wanted := slices.Concat(BaseEnv, s.InheritEnv)
	var names []string          // in the order first set
	vals := map[string]string{} // what the agent gets
	set := func(k, v string) {
		if !slices.Contains(names, k) {
			names = append(names, k)
		}
		vals[k] = v
	}
	for _, kv := range parent {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || !matchAny(wanted, k) {
			continue
		}
		switch {
		case matchAny(s.SecretNames, k):
			withheld = append(withheld, Withheld{Name: k, Why: whyName})
		case secret(v):
			withheld = append(withheld, Withheld{Name: k, Why: whyValue})
		default:
			set(k, v)
		}
	}
	for _, kv := range s.Env {
		k, v, _ := strings.Cut(kv, "=")
		if secret(v) {
			delete(vals, k) // nor the inherited value
			withheld = append(withheld, Withheld{Name: k, Why: whyValue})
			continue
		}
		set(k, v)
	}
	if filepath.IsAbs(s.Dir) {
		set("PWD", s.Dir)
	}
	for _, k := range names {
		if v, ok := vals[k]; ok {
			env = append(env, k+"="+v)
		}
	}
	return env, withheld
}

// matchAny reports whether name matches one of patterns (a trailing or
// inner "*" matches any run of characters, as in path.Match).
func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if p == name {
			return true
		}
		if strings.ContainsAny(p, "*?[") {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
	}
	return false
}
