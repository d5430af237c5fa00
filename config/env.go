package config

import (
	"fmt"
	"slices"
	"strings"
)

// EnvPrefix starts the environment variables that set configuration
// keys. After it, "__" separates the keys of the path:
// GATEWAY_ACP__STREAM__METAMODE sets acp.stream.metaMode. Key names match
// case-insensitively; map keys (agent names, environment variable names,
// space and channel ids) keep the variable's spelling, except
// platform names under access and tag names under acp.stream.tagVisibility,
// which are lower-cased.
//
// Variables starting with GATEWAY_TEST_ are left to tests and ignored.
const EnvPrefix = "GATEWAY_"

const envTestPrefix = "GATEWAY_TEST_"

// fromEnv maps the GATEWAY_ variables of environ onto keys. It returns
// the flat key → value map, each key's source ("env NAME"), and one error
// per variable that names no known key.
func fromEnv(environ []string, ks *keySet) (map[string]any, map[string]string, []error) {
	vals := map[string]any{}
	sources := map[string]string{}
	var errs []error
	for _, kv := range environ {
		name, val, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) || strings.HasPrefix(name, envTestPrefix) {
			continue
		}
		key, err := envKey(name, ks.full)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		vals[key] = val
		sources[key] = "env " + name
	}
	return vals, sources, errs
}

// envKey returns the key the variable name sets.
func envKey(name string, full []string) (string, error) {
	segs := strings.Split(strings.TrimPrefix(name, EnvPrefix), "__")
	if !slices.Contains(segs, "") {
		for _, p := range full {
			if key, ok := matchEnv(strings.Split(p, "."), segs); ok {
				return key, nil
			}
		}
	}
	key := strings.ToLower(strings.Join(segs, "."))
	if s := suggest(key, full); s != "" {
		return "", fmt.Errorf("%s: names no configuration key (did you mean %s, which sets %s?)", name, envName(s), s)
	}
	return "", fmt.Errorf("%s: names no configuration key (%s then keys joined with __, such as %sACP__STREAM__METAMODE)", name, EnvPrefix, EnvPrefix)
}

// matchEnv matches the variable's segments against a key pattern and
// returns the key.
func matchEnv(pattern, segs []string) (string, bool) {
	if len(pattern) != len(segs) {
		return "", false
	}
	out := make([]string, len(segs))
	for i, p := range pattern {
		switch {
		case p == "*" && i > 0 && (pattern[i-1] == "access" || pattern[i-1] == "tagVisibility"):
			out[i] = strings.ToLower(segs[i])
		case p == "*":
			out[i] = segs[i]
		case strings.EqualFold(p, segs[i]):
			out[i] = p
		default:
			return "", false
		}
	}
	return strings.Join(out, "."), true
}

// envName is the variable that sets key.
func envName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}
