package config

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// FilePrefix starts the value of a secret setting that is read from a
// file: "file:/run/credentials/gateway.service/bot-token" (or
// file:${CREDENTIALS_DIRECTORY}/bot-token, systemd's LoadCredential).
// The setting's value is the file's content with one trailing newline
// cut off. Only secret settings take it (the fields tagged secret: the
// platforms' tokens and users, agents.list.*.env.*); elsewhere
// "file:..." is the plain text it is. A secret whose value starts with
// "file:" cannot be written inline.
const FilePrefix = "file:"

// maxSecretFile is the largest secret file read: a token is short, and
// file:/dev/zero must not fill memory.
const maxSecretFile = 64 << 10

// secretKeys lists the key patterns of the secret settings of c's shape
// (fields tagged secret, and everything under one), sorted.
func secretKeys(c Config) []string {
	var out []string
	v := reflect.ValueOf(c)
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		t := fv.Type()
		if view, ok := asView(fv); ok {
			t = view.Type()
		}
		secretKeysOf(t, f.name, f.secret, &out)
	}
	slices.Sort(out)
	return out
}

func secretKeysOf(t reflect.Type, key string, secret bool, out *[]string) {
	switch {
	case t == bodyType || t == durationType:
		// Override bodies hold no secret settings.
	case t.Kind() == reflect.Pointer:
		secretKeysOf(t.Elem(), key, secret, out)
	case t.Kind() == reflect.Struct:
		for _, f := range fieldsOf(t) {
			secretKeysOf(t.FieldByIndex(f.index).Type, key+"."+f.name, secret || f.secret, out)
		}
	case t.Kind() == reflect.Map:
		secretKeysOf(t.Elem(), key+".*", secret, out)
	case secret && t.Kind() == reflect.String:
		*out = append(*out, key)
	}
}

// isSecretKey reports whether key (a path of the merged map) is one of
// the secret patterns.
func isSecretKey(key string, patterns []string) bool {
	segs := strings.Split(key, ".")
	for _, p := range patterns {
		if match(strings.Split(p, "."), segs) {
			return true
		}
	}
	return false
}

// secretRefs returns the variables that the secret settings of m (the
// merged map before expansion) reference as ${NAME}, sorted: the
// gateway's environment holds a secret under each. A file: value's
// references name a path, not a secret, and are left out.
func secretRefs(m map[string]any, patterns []string) []string {
	var out []string
	walkStrings("", m, func(path, s string) {
		if strings.HasPrefix(s, FilePrefix) || !isSecretKey(path, patterns) {
			return
		}
		out = append(out, references(s)...)
	})
	slices.Sort(out)
	return slices.Compact(out)
}

// references lists the names s references as ${NAME} ($${ is a literal).
func references(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		if i > 0 && s[i-1] == '$' {
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return out
		}
		if name := s[i+2 : i+end]; envVarName.MatchString(name) {
			out = append(out, name)
		}
		s = s[i+end+1:]
	}
}

// readSecretFiles replaces each file: value of a secret setting of m (the
// expanded map, modified in place) with the file's content, one trailing
// newline cut off. It returns one error per file that cannot be used,
// naming the key and the path, never the content. Keys in skip (whose
// expansion failed) are left as they are.
func readSecretFiles(m map[string]any, patterns []string, skip map[string]bool) (files []string, errs []error) {
	setStrings("", m, func(path, s string) string {
		name, ok := strings.CutPrefix(s, FilePrefix)
		if !ok || skip[path] || !isSecretKey(path, patterns) {
			return s
		}
		v, err := readSecretFile(name)
		if err != nil {
			errs = append(errs, errorf(path, "%v", err))
			return ""
		}
		files = append(files, filepath.Clean(name))
		return v
	})
	slices.Sort(files)
	return slices.Compact(files), errs
}

// readSecretFile returns the content of the secret file at name (an
// absolute path) without one trailing newline.
func readSecretFile(name string) (string, error) {
	if !filepath.IsAbs(name) {
		return "", fmt.Errorf("file: wants an absolute path (such as file:${CREDENTIALS_DIRECTORY}/token), got %q", name)
	}
	// Stat first: opening a FIFO (file:/dev/stdin) would block.
	fi, err := os.Stat(name)
	if err != nil {
		return "", fmt.Errorf("cannot read the secret file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("the secret file %s is not a regular file", name)
	}
	f, err := os.Open(name)
	if err != nil {
		return "", fmt.Errorf("cannot read the secret file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return "", fmt.Errorf("cannot read the secret file %s: %w", name, err)
	}
	if len(data) > maxSecretFile {
		return "", fmt.Errorf("the secret file %s is larger than %d KiB", name, maxSecretFile>>10)
	}
	s := string(data)
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		s = strings.TrimSuffix(t, "\r")
	}
	if s == "" {
		return "", fmt.Errorf("the secret file %s is empty", name)
	}
	return s, nil
}

// walkStrings calls fn with each string of v and its key path.
func walkStrings(path string, v any, fn func(path, s string)) {
	setStrings(path, v, func(p, s string) string { fn(p, s); return s })
}

// setStrings replaces each string of v (a nested map from koanf, modified
// in place) held under a map key with fn's result; strings in lists are
// left alone (no secret setting is a list).
func setStrings(path string, v any, fn func(path, s string) string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, val := range m {
		p := join(path, k)
		if s, ok := val.(string); ok {
			m[k] = fn(p, s)
			continue
		}
		setStrings(p, val, fn)
	}
}
