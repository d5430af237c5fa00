// Package config loads the gateway's YAML configuration with koanf: a file,
// then --set key=value overrides, validated with validator/v10. Every
// problem is reported at once, each naming its YAML key and the allowed
// values; unknown keys are rejected with a did-you-mean suggestion.
//
// Each package owns its section's type (projector.Settings for acp.stream,
// typing.Config for typing); this package only composes them.
package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/acpgw/gateway/projector"
	"github.com/acpgw/gateway/typing"
	"github.com/go-playground/validator/v10"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/v2"
)

// Config is the whole configuration.
type Config struct {
	ACP    ACP           `koanf:"acp"`
	Typing typing.Config `koanf:"typing"`
}

// ACP is the acp section.
type ACP struct {
	// Stream is acp.stream: what of the agent's stream people see.
	Stream projector.Settings `koanf:"stream"`
}

// Default returns the documented defaults.
func Default() Config {
	return Config{
		ACP:    ACP{Stream: projector.DefaultSettings()},
		Typing: typing.DefaultConfig(),
	}
}

// Load reads the YAML file at path (none if path is ""), applies sets
// ("key=value", keys in YAML dot notation) and validates the result.
func Load(path string, sets []string) (Config, error) {
	k := koanf.New(".")
	if path != "" {
		if err := k.Load(file.Provider(path), yaml.Parser()); err != nil {
			return Config{}, fmt.Errorf("read config %s: %w", path, err)
		}
	}
	if len(sets) > 0 {
		m := map[string]any{}
		for _, s := range sets {
			key, val, ok := strings.Cut(s, "=")
			if !ok || strings.TrimSpace(key) == "" {
				return Config{}, fmt.Errorf("--set %q: want key=value", s)
			}
			m[strings.TrimSpace(key)] = val
		}
		if err := k.Load(confmap.Provider(m, "."), nil); err != nil {
			return Config{}, fmt.Errorf("apply --set: %w", err)
		}
	}
	var errs []error
	known := keysOf(reflect.TypeFor[Config](), "")
	for _, key := range k.Keys() {
		if !isKnown(key, known) {
			errs = append(errs, unknownKey(key, known))
		}
	}
	cfg := Default()
	if err := k.UnmarshalWithConf("", &cfg, koanf.UnmarshalConf{Tag: "koanf"}); err != nil {
		errs = append(errs, fmt.Errorf("decode config: %w", err))
	}
	if err := Validate(cfg); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return cfg, nil
}

// Validate checks every field and returns all problems joined, each as
// "yaml.key: what is wrong".
func Validate(cfg Config) error {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		if n := strings.Split(f.Tag.Get("koanf"), ",")[0]; n != "" {
			return n
		}
		return f.Name
	})
	err := v.Struct(cfg)
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) {
		return err
	}
	var errs []error
	for _, fe := range ves {
		path := fe.Namespace()
		if _, rest, ok := strings.Cut(path, "."); ok {
			path = rest
		}
		errs = append(errs, fmt.Errorf("%s: %s", path, describe(fe)))
	}
	return errors.Join(errs...)
}

func describe(fe validator.FieldError) string {
	switch fe.Tag() {
	case "oneof":
		return fmt.Sprintf("must be one of %s, got %q", fe.Param(), fmt.Sprint(fe.Value()))
	case "min":
		return fmt.Sprintf("must be at least %s, got %v", fe.Param(), fe.Value())
	case "max":
		return fmt.Sprintf("must be at most %s, got %v", fe.Param(), fe.Value())
	}
	return fmt.Sprintf("fails %q (%s), got %v", fe.Tag(), fe.Param(), fe.Value())
}

// keysOf lists the YAML keys of t's fields; a map field ends in ".*".
func keysOf(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		name := strings.Split(f.Tag.Get("koanf"), ",")[0]
		if name == "" || !f.IsExported() {
			continue
		}
		key := prefix + name
		switch f.Type.Kind() {
		case reflect.Struct:
			keys = append(keys, keysOf(f.Type, key+".")...)
		case reflect.Map:
			keys = append(keys, key+".*")
		default:
			keys = append(keys, key)
		}
	}
	return keys
}

func isKnown(key string, known []string) bool {
	for _, k := range known {
		if k == key {
			return true
		}
		if base, ok := strings.CutSuffix(k, ".*"); ok && strings.HasPrefix(key, base+".") && !strings.Contains(key[len(base)+1:], ".") {
			return true
		}
	}
	return false
}

func unknownKey(key string, known []string) error {
	best, bestD := "", len(key)/2+2
	for _, k := range known {
		if strings.HasSuffix(k, ".*") {
			continue
		}
		if d := distance(strings.ToLower(key), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Errorf("%s: unknown key (did you mean %s?)", key, best)
	}
	return fmt.Errorf("%s: unknown key", key)
}

// Keys lists every known YAML key, sorted (map sections end in ".*").
func Keys() []string {
	k := keysOf(reflect.TypeFor[Config](), "")
	sort.Strings(k)
	return slices.Compact(k)
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
