package config

import (
	"errors"
	"fmt"
	"maps"
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
			// YAML reads an integer too large for 64 bits as a float.
			lo, hi := intRange(to)
			if f < lo || f >= hi+1 {
				return nil, outOfRange(to, f < 0, strconv.FormatFloat(f, 'g', -1, 64))
			}
			if isUint(to.Kind()) {
				return uint64(f), nil
			}
			return int64(f), nil
		case reflect.String:
			return strconv.FormatFloat(f, 'f', -1, 64), nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if to.Kind() == reflect.String {
			// Ids written as YAML numbers (channels: [1234]).
			return fmt.Sprint(data), nil
		}
		if isInt(to.Kind()) || isUint(to.Kind()) {
			// Decoding would wrap a value that does not fit (a uint64
			// over the int64 range turned negative).
			if err := checkIntRange(v, to); err != nil {
				return nil, err
			}
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
		if errors.Is(err, strconv.ErrRange) {
			return nil, outOfRange(to, strings.HasPrefix(t, "-"), t)
		}
		if err != nil {
			return nil, fmt.Errorf("want an integer, got %q", s)
		}
		return n, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(t, 10, to.Bits())
		if errors.Is(err, strconv.ErrRange) {
			return nil, outOfRange(to, false, t)
		}
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

func isInt(k reflect.Kind) bool {
	return k == reflect.Int || k == reflect.Int8 || k == reflect.Int16 || k == reflect.Int32 || k == reflect.Int64
}

func isUint(k reflect.Kind) bool {
	return k == reflect.Uint || k == reflect.Uint8 || k == reflect.Uint16 || k == reflect.Uint32 || k == reflect.Uint64
}

// intRange returns the smallest and largest value of the integer type t,
// as floats.
func intRange(t reflect.Type) (lo, hi float64) {
	bits := t.Bits()
	if isUint(t.Kind()) {
		return 0, math.Ldexp(1, bits) - 1
	}
	return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) - 1
}

// checkIntRange reports an integer v (of any integer kind) that does not
// fit the integer type to.
func checkIntRange(v reflect.Value, to reflect.Type) error {
	bits := to.Bits()
	switch {
	case isUint(v.Kind()):
		u := v.Uint()
		limit := uint64(1)<<(bits-1) - 1 // the largest signed value
		if isUint(to.Kind()) {
			limit = math.MaxUint64 >> (64 - bits)
		}
		if u > limit {
			return outOfRange(to, false, strconv.FormatUint(u, 10))
		}
	case isInt(v.Kind()):
		n := v.Int()
		if isUint(to.Kind()) {
			if n < 0 {
				return outOfRange(to, true, strconv.FormatInt(n, 10))
			}
			if bits < 64 && uint64(n) > math.MaxUint64>>(64-bits) {
				return outOfRange(to, false, strconv.FormatInt(n, 10))
			}
			return nil
		}
		if bits < 64 && (n < -(1<<(bits-1)) || n > 1<<(bits-1)-1) {
			return outOfRange(to, n < 0, strconv.FormatInt(n, 10))
		}
	}
	return nil
}

// outOfRange is the error for an integer (written as got) that does not
// fit the integer type t.
func outOfRange(t reflect.Type, negative bool, got string) error {
	bits := t.Bits()
	if negative {
		lo := "0"
		if isInt(t.Kind()) {
			lo = strconv.FormatInt(-1<<(bits-1), 10)
		}
		return fmt.Errorf("too small: want an integer of at least %s, got %s", lo, got)
	}
	hi := strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
	if isInt(t.Kind()) {
		hi = strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
	}
	return fmt.Errorf("too large: want an integer of at most %s, got %s", hi, got)
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

// decodeConfig stores raw (the merged layers) into cfg, over what it
// holds, and returns the problems as path errors. The sections whose
// shape comes from the platforms (composite) are decoded through their
// views.
func decodeConfig(raw map[string]any, cfg *Config) []error {
	type part struct {
		name  string
		field reflect.Value
		in    any
	}
	rest := maps.Clone(raw)
	v := reflect.ValueOf(cfg).Elem()
	var parts []part
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.index)
		if _, ok := asView(fv); !ok {
			continue
		}
		if in, ok := rest[f.name]; ok {
			parts = append(parts, part{f.name, fv, in})
			delete(rest, f.name)
		}
	}
	var errs []error
	if err := decode(rest, cfg); err != nil {
		errs = append(errs, decodeErrors(err)...)
	}
	for _, p := range parts {
		view, _ := asView(p.field)
		ptr := reflect.New(view.Type())
		ptr.Elem().Set(view)
		if err := decode(p.in, ptr.Interface()); err != nil {
			for _, e := range decodeErrors(err) {
				if pe, ok := e.(*pathError); ok && pe.path != "" {
					e = &pathError{path: p.name + "." + pe.path, msg: pe.msg}
				} else if ok {
					e = &pathError{path: p.name, msg: pe.msg}
				}
				errs = append(errs, e)
			}
		}
		p.field.Addr().Interface().(interface{ set(reflect.Value) }).set(ptr.Elem())
	}
	return errs
}
