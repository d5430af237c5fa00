package config

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
)

// decode stores the nested map in into out (a pointer to a struct with
// koanf tags), over what out already holds. Strings (from the environment
// and --set) are parsed into numbers, booleans, durations and
// comma-separated lists; otherwise types must match: a YAML number is not a
// duration (write 30s), a fraction is not an integer.
func decode(in any, out any) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		DecodeHook: mapstructure.DecodeHookFuncType(convert),
		Result:     out,
		TagName:    "koanf",
		MatchName:  func(key, field string) bool { return key == field },
	})
	if err != nil {
		return fmt.Errorf("decode config: %w", err)
	}
	return d.Decode(in)
}

// convert is the decode hook: it turns data into the type to where the
// conversion is unambiguous, and leaves it alone otherwise.
func convert(from, to reflect.Type, data any) (any, error) {
	if data == nil {
		return data, nil
	}
	v := reflect.ValueOf(data)
	if to == durationType {
		return toDuration(v)
	}
	switch to.Kind() {
	case reflect.Slice:
		if from.Kind() == reflect.Map {
			return nil, errors.New("want a list, got a mapping")
		}
	case reflect.Map, reflect.Struct:
		if from.Kind() != reflect.Map && from.Kind() != reflect.Struct {
			return nil, fmt.Errorf("want a mapping of keys, got %s", describeValue(data))
		}
	}
	switch from.Kind() {
	case reflect.String:
		return fromString(v.String(), to)
	case reflect.Float32, reflect.Float64:
		f := v.Float()
		switch to.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("want an integer, got %v", f)
			}
			return int64(f), nil
		case reflect.String:
			return strconv.FormatFloat(f, 'f', -1, 64), nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if to.Kind() == reflect.String {
			// Ids written as YAML numbers (guilds: [1234]).
			return fmt.Sprint(data), nil
		}
	case reflect.Bool:
		if to.Kind() == reflect.String {
			return strconv.FormatBool(v.Bool()), nil
		}
	}
	return data, nil
}

func toDuration(v reflect.Value) (any, error) {
	switch v.Kind() {
	case reflect.String:
		s := strings.TrimSpace(v.String())
		if s == "0" {
			return time.Duration(0), nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Errorf("want a duration such as 90s, 10m or 1h30m, got %q", v.String())
		}
		return d, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Type() == durationType || v.Int() == 0 {
			return time.Duration(v.Int()), nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if v.Uint() == 0 {
			return time.Duration(0), nil
		}
	case reflect.Float32, reflect.Float64:
		if v.Float() == 0 {
			return time.Duration(0), nil
		}
	}
	return nil, fmt.Errorf("want a duration with a unit such as 90s, 10m or 1h30m, got %s", describeValue(v.Interface()))
}

func fromString(s string, to reflect.Type) (any, error) {
	t := strings.TrimSpace(s)
	switch to.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(t, 10, to.Bits())
		if err != nil {
			return nil, fmt.Errorf("want an integer, got %q", s)
		}
		return n, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(t, 10, to.Bits())
		if err != nil {
			return nil, fmt.Errorf("want a non-negative integer, got %q", s)
		}
		return n, nil
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(t, to.Bits())
		if err != nil {
			return nil, fmt.Errorf("want a number, got %q", s)
		}
		return f, nil
	case reflect.Bool:
		b, err := strconv.ParseBool(t)
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", s)
		}
		return b, nil
	case reflect.Slice:
		if to.Elem().Kind() != reflect.String {
			break
		}
		if t == "" {
			return []string{}, nil
		}
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
		}
		return parts, nil
	}
	return s, nil
}

// decodeErrors turns the decoder's errors into path errors.
func decodeErrors(err error) []error {
	switch e := err.(type) {
	case *mapstructure.DecodeError:
		return []error{&pathError{path: bracketsToDots(e.Name()), msg: decodeMessage(e.Unwrap())}}
	case interface{ Unwrap() []error }:
		var out []error
		for _, e := range e.Unwrap() {
			out = append(out, decodeErrors(e)...)
		}
		return out
	case interface{ Unwrap() error }:
		if inner := e.Unwrap(); inner != nil {
			return decodeErrors(inner)
		}
	}
	return []error{err}
}

func decodeMessage(err error) string {
	var ue *mapstructure.UnconvertibleTypeError
	if errors.As(err, &ue) {
		return fmt.Sprintf("want %s, got %s", describeType(ue.Expected.Type()), describeValue(ue.Value))
	}
	var pe *mapstructure.ParseError
	if errors.As(err, &pe) {
		return fmt.Sprintf("want %s, got %s", describeType(pe.Expected.Type()), describeValue(pe.Value))
	}
	return err.Error()
}

func describeType(t reflect.Type) string {
	if t == durationType {
		return "a duration"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping of keys"
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return t.String()
}

// describeValue says what a decoded YAML value is, without quoting more
// than a short scalar.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		return strconv.Quote(v)
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v)
	case map[string]any, map[any]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%v", v)
}
