package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
	"go.yaml.in/yaml/v3"
)

// DefaultFile is the file Load reads when LoadOptions.Path is empty, if it
// exists in the working directory.
const DefaultFile = "gateway.yaml"

// ErrNoFile is returned by Watch when there is no configuration file.
var ErrNoFile = errors.New("no configuration file")

// LoadOptions says where the configuration comes from.
type LoadOptions struct {
	// Path is the YAML file ("" = DefaultFile in the working directory
	// if it exists, else no file).
	Path string
	// Sets are "key=value" settings (keys in YAML dot notation, such as
	// acp.stream.metaMode=verbose); they win over everything else.
	Sets []string
	// Environ is the environment ("K=V" entries) for GATEWAY_ variables,
	// ${VAR} references and the default data directory; nil means
	// os.Environ().
	Environ []string
	// Platforms are the chat platforms the configuration has sections
	// for (channels, access and overrides), in the order Redacted shows
	// them. cmd/gateway gives the adapters'.
	Platforms []Platform
}

// Load reads the YAML file at path ("" = DefaultFile if present), the
// GATEWAY_ environment and sets ("key=value"), and validates the result.
// It is LoadOptions{Path: path, Sets: sets}.Load().
func Load(path string, sets []string) (Config, error) {
	return LoadOptions{Path: path, Sets: sets}.Load()
}

// Load builds the configuration from the defaults, the file, the
// environment and o.Sets, each over the one before, expands ${VAR}
// references, and validates it. It reads the file and the secret files
// that file: values name (FilePrefix), and nothing else. The
// error lists every problem found, one per line ("yaml.key: what is
// wrong"); a file that cannot be read or parsed is reported alone.
func (o LoadOptions) Load() (Config, error) {
	path, err := o.file()
	if err != nil {
		return Config{}, err
	}
	var data []byte
	if path != "" {
		if data, err = os.ReadFile(path); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return Config{}, &notFoundError{path: path, err: err}
			}
			return Config{}, fmt.Errorf("read config: %w", err)
		}
	}
	return o.load(path, data)
}

// notFoundError is Load's error for a configuration file that does not
// exist; it matches fs.ErrNotExist.
type notFoundError struct {
	path string
	err  error
}

func (e *notFoundError) Error() string { return fmt.Sprintf("config file %q not found", e.path) }
func (e *notFoundError) Unwrap() error { return e.err }

// file returns the file to read: o.Path, or DefaultFile if it exists, or
// "".
func (o LoadOptions) file() (string, error) {
	if o.Path != "" {
		return o.Path, nil
	}
	switch _, err := os.Stat(DefaultFile); {
	case err == nil:
		return DefaultFile, nil
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	default:
		return "", fmt.Errorf("read config: %w", err)
	}
}

func (o LoadOptions) environ() []string {
	if o.Environ == nil {
		return os.Environ()
	}
	return o.Environ
}

// load builds the configuration from data, the contents of path ("" = no
// file).
func (o LoadOptions) load(path string, data []byte) (Config, error) {
	environ := o.environ()
	getenv := lookupIn(environ)
	cfg := defaults(getenv, o.Platforms)
	known := keysFor(cfg)
	k := koanf.New(".")
	sources := map[string]string{}
	var errs []error

	if path != "" {
		m, err := parseYAML(data)
		if err != nil {
			return Config{}, fmt.Errorf("read config %s: %w", path, err)
		}
		if err := k.Load(confmap.Provider(m, ""), nil); err != nil {
			return Config{}, fmt.Errorf("read config %s: %w", path, err)
		}
		for _, key := range flatKeys("", m) {
			sources[key] = "file"
		}
		errs = append(errs, checkCommandStrings(m)...)
	}

	env, envSources, envErrs := fromEnv(environ, known)
	errs = append(errs, envErrs...)
	if len(env) > 0 {
		if err := k.Load(confmap.Provider(env, "."), nil); err != nil {
			return Config{}, fmt.Errorf("apply environment: %w", err)
		}
		for key, src := range envSources {
			sources[key] = src
		}
	}

	if len(o.Sets) > 0 {
		m := map[string]any{}
		for _, s := range o.Sets {
			key, val, ok := strings.Cut(s, "=")
			key = strings.TrimSpace(key)
			if !ok || key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") {
				errs = append(errs, fmt.Errorf("--set %q: want key=value", s))
				continue
			}
			m[key] = val
			sources[key] = "--set"
		}
		if err := k.Load(confmap.Provider(m, "."), nil); err != nil {
			return Config{}, fmt.Errorf("apply --set: %w", err)
		}
	}

	for _, key := range k.Keys() {
		if !known.underBody(key) && !knownIn(key, known.doc) && !underLeaf(key, known.doc) {
			errs = append(errs, unknownKey("", key, known.full))
		}
	}

	secrets := secretKeys(cfg)
	raw := k.Raw()
	secretVars := secretRefs(raw, secrets)
	raw, expErrs := expandAll(raw, getenv)
	errs = append(errs, expErrs...)
	secretFiles, fileErrs := readSecretFiles(raw, secrets, pathsOf(expErrs))
	errs = append(errs, fileErrs...)

	bad := pathsOf(fileErrs) // paths that did not decode or read
	for _, e := range decodeConfig(raw, &cfg) {
		if pe, ok := e.(*pathError); ok {
			bad[pe.path] = true
		}
		errs = append(errs, e)
	}
	cfg.resolvePaths(getenv)
	cfg.Agents.fillDefaults()
	for _, e := range validate(cfg) {
		// A value that did not decode was left as it was; do not
		// report it twice.
		if pe, ok := e.(*pathError); !ok || !bad[pe.path] {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return Config{}, joinSorted(errs)
	}
	cfg.res = &resolved{file: path, sources: sources, secretVars: secretVars, secretFiles: secretFiles}
	cfg.res.precompute(cfg)
	return cfg, nil
}

// pathsOf returns the set of keys the path errors of errs name.
func pathsOf(errs []error) map[string]bool {
	out := map[string]bool{}
	for _, e := range errs {
		if pe, ok := e.(*pathError); ok {
			out[pe.path] = true
		}
	}
	return out
}

// SecretVars returns the environment variables that c's secret settings
// referenced as ${NAME} (a file: value's path excepted), sorted: their
// values are secrets the gateway holds. Nil when c was not loaded. It
// does no I/O.
func (c Config) SecretVars() []string {
	if c.res == nil {
		return nil
	}
	return slices.Clone(c.res.secretVars)
}

// SecretFiles returns the files c's secret settings were read from
// (file:/path), sorted: no agent sees them. Nil when c was not loaded. It
// does no I/O.
func (c Config) SecretFiles() []string {
	if c.res == nil {
		return nil
	}
	return slices.Clone(c.res.secretFiles)
}

// File returns the configuration file c was read from ("" if none or if c
// was not loaded). It does no I/O.
func (c Config) File() string {
	if c.res == nil {
		return ""
	}
	return c.res.file
}

// Source says where the setting at key (YAML dot notation, such as
// "metrics.listen") came from: "file", "env NAME", "--set", or
// "default" when nothing set it (or c was not loaded). It does no I/O.
func (c Config) Source(key string) string {
	if c.res == nil {
		return "default"
	}
	for k := key; k != ""; k = parent(k) {
		if src, ok := c.res.sources[k]; ok {
			return src
		}
	}
	return "default"
}

// parseYAML parses a YAML document into nested maps with string keys. An
// empty document is an empty map.
func parseYAML(data []byte) (map[string]any, error) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc == nil {
		return map[string]any{}, nil
	}
	var errs []error
	v := normalize("", doc, &errs)
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a mapping of keys at the top, got %s", describeValue(doc))
	}
	if len(errs) > 0 {
		return nil, joinSorted(errs)
	}
	return m, nil
}

// normalize turns YAML maps into map[string]any, reporting keys that
// cannot be YAML paths.
func normalize(path string, v any, errs *[]error) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, val := range v {
			out[k] = normalize(checkKey(path, k, errs), val, errs)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, val := range v {
			ks := fmt.Sprint(k)
			if k == nil {
				ks = "null"
			}
			out[ks] = normalize(checkKey(path, ks, errs), val, errs)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, val := range v {
			out[i] = normalize(fmt.Sprintf("%s[%d]", path, i), val, errs)
		}
		return out
	}
	return v
}

func checkKey(path, k string, errs *[]error) string {
	full := k
	if path != "" {
		full = path + "." + k
	}
	where := path
	if where == "" {
		where = "(top level)"
	}
	switch {
	case k == "":
		*errs = append(*errs, errorf(where, "has an empty key"))
	case strings.Contains(k, "."):
		*errs = append(*errs, errorf(where, "key %q must not contain \".\"", k))
	}
	return full
}

// checkCommandStrings rejects an agent command written in the file as one
// string with spaces ("npx -y foo"), which would run a program of that
// whole name; the file takes a list. (The environment and --set take a
// comma-separated list, so a string there is one.)
func checkCommandStrings(m map[string]any) []error {
	agents, _ := m["agents"].(map[string]any)
	list, _ := agents["list"].(map[string]any)
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(list)) {
		a, _ := list[name].(map[string]any)
		cmd, ok := a["command"].(string)
		if !ok || len(strings.Fields(cmd)) < 2 {
			continue
		}
		errs = append(errs, errorf("agents.list."+name+".command", "must be a list such as [%s], got the string %q",
			strings.Join(strings.Fields(cmd), ", "), cmd))
	}
	return errs
}

// emptyYAML reports whether data holds no YAML document (nothing, or
// only comments and blank lines).
func emptyYAML(data []byte) bool {
	var doc any
	return yaml.Unmarshal(data, &doc) == nil && doc == nil
}
