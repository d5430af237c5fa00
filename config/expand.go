package config

import (
	"fmt"
	"slices"
	"strings"
)

// expandAll replaces ${VAR} references in every string of m (a nested map
// from koanf, which it may modify) with the variable's value. It returns
// one error per reference to an unset variable and per malformed
// reference, each naming the key.
func expandAll(m map[string]any, getenv func(string) (string, bool)) (map[string]any, []error) {
	var errs []error
	out := expandValue("", m, getenv, &errs).(map[string]any)
	return out, errs
}

func expandValue(path string, v any, getenv func(string) (string, bool), errs *[]error) any {
	switch v := v.(type) {
	case string:
		s, err := expand(v, getenv)
		if err != nil {
			// Keep the reference, so that no other check complains
			// about an empty value.
			*errs = append(*errs, &pathError{path: path, msg: err.Error()})
			return v
		}
		return s
	case map[string]any:
		for k, val := range v {
			v[k] = expandValue(join(path, k), val, getenv, errs)
		}
		return v
	case []any:
		for i, val := range v {
			v[i] = expandValue(fmt.Sprintf("%s[%d]", path, i), val, getenv, errs)
		}
		return v
	case []string:
		v = slices.Clone(v)
		for i, val := range v {
			v[i] = expandValue(fmt.Sprintf("%s[%d]", path, i), val, getenv, errs).(string)
		}
		return v
	}
	return v
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// expand replaces each ${NAME} in s with the variable's value; "$${" is a
// literal "${". Any other "$" is kept. Unset variables (set but empty is
// fine) and malformed references are errors; the value of a variable never
// appears in one.
func expand(s string, getenv func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	var missing []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			break
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1] + "${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ (write $${ for a literal ${)")
		}
		name := s[i+2 : i+end]
		if !envVarName.MatchString(name) {
			return "", fmt.Errorf("${%s}: not a variable name (write $${ for a literal ${)", name)
		}
		if val, ok := getenv(name); ok {
			b.WriteString(val)
		} else if !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		s = s[i+end+1:]
	}
	switch len(missing) {
	case 0:
		return b.String(), nil
	case 1:
		return "", fmt.Errorf("environment variable %s is not set (referenced as ${%s})", missing[0], missing[0])
	}
	return "", fmt.Errorf("environment variables %s are not set", strings.Join(missing, ", "))
}
