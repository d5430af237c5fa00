package acpwire

import (
	"encoding/binary"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of objects and arrays accepted, the same
// limit encoding/json applies, so that both agree on which lines are valid.
const maxDepth = 10000

// DecodeError reports a line that is not valid JSON or not a JSON-RPC 2.0
// frame.
type DecodeError struct {
	// Offset is the byte offset in the line where the problem was found.
	Offset int
	// Msg says what was found and what was expected there.
	Msg string
}

// Error implements error.
func (e *DecodeError) Error() string {
	return "offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// String flags reported by scanString.
const (
	strEscape   uint8 = 1 << iota // contains a backslash escape
	strNonASCII                   // contains a byte >= 0x80
)

// token is one scanned JSON value.
type token struct {
	// kind is '"' (string), '0' (number), 't', 'f', 'n' (literals),
	// '{' or '[' (containers, already skipped and validated).
	kind byte
	// raw is the string's contents between the quotes, or the whole
	// value for any other kind. It aliases the line.
	raw []byte
	// fl holds the string flags.
	fl uint8
	// at is the offset of the value in the line.
	at int
}

// decoder holds the state of one Decode call. It lives on Decode's stack.
type decoder struct {
	data []byte
	f    *Frame
	// upd collects what update decoding needs besides f.Update.
	upd updState
	// updErr says why the last session/update params decoded were not a
	// session/update ("" if they were); updErrAt is where.
	updErr   string
	updErrAt int
}

// fail returns a DecodeError at off saying what was expected.
func (d *decoder) fail(off int, expected string) error {
	if off >= len(d.data) {
		return &DecodeError{Offset: off, Msg: "unexpected end of line, expected " + expected}
	}
	return &DecodeError{Offset: off, Msg: "unexpected " + strconv.QuoteRune(rune(d.data[off])) + ", expected " + expected}
}

// ws returns the index of the first non-whitespace byte at or after i.
func (d *decoder) ws(i int) int {
	for i < len(d.data) {
		switch d.data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special sets the high bit of the lowest byte of v that is a quote, a
// backslash, a control character or not ASCII. Bytes above the lowest one so
// marked may be marked falsely.
func special(v uint64) uint64 {
	ctl := (v - lsb*0x20) &^ v
	q := v ^ (lsb * '"')
	q = (q - lsb) &^ q
	bs := v ^ (lsb * '\\')
	bs = (bs - lsb) &^ bs
	return (ctl | q | bs | v) & msb
}

// scanString validates the string starting with the quote at i and returns
// the index after its closing quote and its flags.
func (d *decoder) scanString(i int) (int, uint8, error) {
	data := d.data
	var fl uint8
	j := i + 1
	for j < len(data) {
		if j+8 <= len(data) {
			m := special(binary.LittleEndian.Uint64(data[j:]))
			if m == 0 {
				j += 8
				continue
			}
			j += bits.TrailingZeros64(m) >> 3
		}
		c := data[j]
		switch {
		case c == '"':
			return j + 1, fl, nil
		case c == '\\':
			fl |= strEscape
			if j+1 >= len(data) {
				return 0, 0, d.fail(j+1, "escape character")
			}
			switch data[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				for k := j + 2; k < j+6; k++ {
					if k >= len(data) || unhex(data[k]) < 0 {
						return 0, 0, d.fail(k, "hexadecimal digit in \\u escape")
					}
				}
				j += 6
			default:
				return 0, 0, d.fail(j+1, "escape character")
			}
		case c < 0x20:
			return 0, 0, d.fail(j, "string character (control characters must be escaped)")
		case c >= utf8.RuneSelf:
			fl |= strNonASCII
			j++
		default:
			j++
		}
	}
	return 0, 0, d.fail(j, "closing '\"' of string")
}

func unhex(c byte) rune {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0')
	case 'a' <= c && c <= 'f':
		return rune(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return rune(c - 'A' + 10)
	}
	return -1
}

// hex4 decodes the four hex digits that follow a validated "\u".
func hex4(b []byte) rune {
	return unhex(b[0])<<12 | unhex(b[1])<<8 | unhex(b[2])<<4 | unhex(b[3])
}

// appendUnquoted appends the decoded contents of the validated string
// contents s to dst, with the same results as encoding/json: escapes are
// decoded (surrogate pairs combined), and lone surrogates and invalid UTF-8
// become U+FFFD.
func appendUnquoted(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			e := s[i+1]
			i += 2
			switch e {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(s[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2 = hex4(s[i+2:])
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						dst = utf8.AppendRune(dst, dec)
						i += 6
						continue
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
			default: // '"', '\\', '/'
				dst = append(dst, e)
			}
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, s[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}

// str returns the decoded string contents raw with flags fl as a new string.
func (d *decoder) str(raw []byte, fl uint8) string {
	if fl == 0 || fl == strNonASCII && utf8.Valid(raw) {
		return string(raw)
	}
	d.f.scratch = appendUnquoted(d.f.scratch[:0], raw)
	return string(d.f.scratch)
}

// bytes returns the decoded string contents raw, aliasing the line when no
// decoding is needed and Frame's scratch space otherwise. The result is only
// valid until the next call that decodes a string.
func (d *decoder) bytes(raw []byte, fl uint8) []byte {
	if fl == 0 || fl == strNonASCII && utf8.Valid(raw) {
		return raw
	}
	d.f.scratch = appendUnquoted(d.f.scratch[:0], raw)
	return d.f.scratch
}

// key returns a decoded object key for matching. The result is only valid
// until the next call to key.
func (d *decoder) key(raw []byte, fl uint8) []byte {
	if fl == 0 {
		return raw
	}
	d.f.key = appendUnquoted(d.f.key[:0], raw)
	return d.f.key
}

// scanNumber validates the number starting at i and returns its end.
func (d *decoder) scanNumber(i int) (int, error) {
	data := d.data
	j := i
	if j < len(data) && data[j] == '-' {
		j++
	}
	switch {
	case j < len(data) && data[j] == '0':
		j++
	case j < len(data) && '1' <= data[j] && data[j] <= '9':
		j++
		for j < len(data) && isDigit(data[j]) {
			j++
		}
	default:
		return 0, d.fail(j, "digit")
	}
	if j < len(data) && data[j] == '.' {
		j++
		if j >= len(data) || !isDigit(data[j]) {
			return 0, d.fail(j, "digit after decimal point")
		}
		for j < len(data) && isDigit(data[j]) {
			j++
		}
	}
	if j < len(data) && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		if j >= len(data) || !isDigit(data[j]) {
			return 0, d.fail(j, "digit in exponent")
		}
		for j < len(data) && isDigit(data[j]) {
			j++
		}
	}
	return j, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// literal checks that the literal lit starts at i and returns its end.
func (d *decoder) literal(i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(d.data) || d.data[i+k] != lit[k] {
			return 0, d.fail(i+k, "literal "+lit)
		}
	}
	return i + len(lit), nil
}

// next scans the value at i (no leading whitespace) whose enclosing
// containers number depth, and returns it and the index after it.
// Containers are validated and skipped.
func (d *decoder) next(i, depth int) (token, int, error) {
	if i >= len(d.data) {
		return token{}, 0, d.fail(i, "value")
	}
	var (
		end int
		err error
	)
	c := d.data[i]
	switch c {
	case '"':
		var fl uint8
		if end, fl, err = d.scanString(i); err != nil {
			return token{}, 0, err
		}
		return token{kind: '"', raw: d.data[i+1 : end-1], fl: fl, at: i}, end, nil
	case '{', '[':
		end, err = d.skipContainer(i, depth)
	case 't':
		end, err = d.literal(i, "true")
	case 'f':
		end, err = d.literal(i, "false")
	case 'n':
		end, err = d.literal(i, "null")
	default:
		if c != '-' && !isDigit(c) {
			return token{}, 0, d.fail(i, "value")
		}
		c = '0'
		end, err = d.scanNumber(i)
	}
	if err != nil {
		return token{}, 0, err
	}
	return token{kind: c, raw: d.data[i:end], at: i}, end, nil
}

// span returns the whole text of the value t, quotes included.
func (d *decoder) span(t token) []byte {
	if t.kind == '"' {
		return d.data[t.at : t.at+len(t.raw)+2]
	}
	return t.raw
}

// skip validates and skips the value at i whose enclosing containers
// number depth.
func (d *decoder) skip(i, depth int) (int, error) {
	if i < len(d.data) && d.data[i] == '"' {
		end, _, err := d.scanString(i)
		return end, err
	}
	_, end, err := d.next(i, depth)
	return end, err
}

// skipContainer validates and skips the object or array at i.
func (d *decoder) skipContainer(i, depth int) (int, error) {
	if depth+1 > maxDepth {
		return 0, &DecodeError{Offset: i, Msg: "nesting deeper than " + strconv.Itoa(maxDepth)}
	}
	obj := d.data[i] == '{'
	i++
	for first := true; ; first = false {
		var (
			v   int
			ok  bool
			err error
		)
		if obj {
			_, _, v, ok, err = d.member(i, first)
		} else {
			v, ok, err = d.elem(i, first)
		}
		if err != nil {
			return 0, err
		}
		if !ok {
			return v, nil
		}
		if i, err = d.skip(v, depth+1); err != nil {
			return 0, err
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// member reads the next member of an object. On the first call i is just
// after the '{'; on later calls it is just after the previous value. It
// returns the key's raw contents and flags and the index of the value, or
// ok false and the index after the closing '}'.
func (d *decoder) member(i int, first bool) (key []byte, fl uint8, v int, ok bool, err error) {
	data := d.data
	i = d.ws(i)
	if first {
		if i < len(data) && data[i] == '}' {
			return nil, 0, i + 1, false, nil
		}
		if i >= len(data) || data[i] != '"' {
			return nil, 0, 0, false, d.fail(i, "string key or '}'")
		}
	} else {
		if i >= len(data) {
			return nil, 0, 0, false, d.fail(i, "',' or '}' after object member")
		}
		switch data[i] {
		case ',':
			i = d.ws(i + 1)
		case '}':
			return nil, 0, i + 1, false, nil
		default:
			return nil, 0, 0, false, d.fail(i, "',' or '}' after object member")
		}
		if i >= len(data) || data[i] != '"' {
			return nil, 0, 0, false, d.fail(i, "string key")
		}
	}
	end, fl, err := d.scanString(i)
	if err != nil {
		return nil, 0, 0, false, err
	}
	key = data[i+1 : end-1]
	i = d.ws(end)
	if i >= len(data) || data[i] != ':' {
		return nil, 0, 0, false, d.fail(i, "':' after object key")
	}
	return key, fl, d.ws(i + 1), true, nil
}

// elem reads the next element of an array. On the first call i is just
// after the '['; on later calls it is just after the previous value. It
// returns the index of the element, or ok false and the index after the
// closing ']'.
func (d *decoder) elem(i int, first bool) (v int, ok bool, err error) {
	data := d.data
	i = d.ws(i)
	if first {
		if i < len(data) && data[i] == ']' {
			return i + 1, false, nil
		}
		return i, true, nil
	}
	if i >= len(data) {
		return 0, false, d.fail(i, "',' or ']' after array element")
	}
	switch data[i] {
	case ',':
		return d.ws(i + 1), true, nil
	case ']':
		return i + 1, false, nil
	}
	return 0, false, d.fail(i, "',' or ']' after array element")
}

// parseInt returns the integer value of the number token raw, accepting
// integral values written with a fraction or exponent ("1e3"). ok is false
// for non-integral or out-of-range values.
func parseInt(raw []byte) (n int64, ok bool) {
	neg := len(raw) > 0 && raw[0] == '-'
	digits := raw[boolInt(neg):]
	if len(digits) > 0 && len(digits) <= 18 {
		var u int64
		for _, c := range digits {
			if !isDigit(c) {
				goto slow
			}
			u = u*10 + int64(c-'0')
		}
		if neg {
			u = -u
		}
		return u, true
	}
slow:
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
		return n, true
	}
	x, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
		return 0, false
	}
	return int64(x), true
}

// thoughtWords are the metadata values that mark a chunk as a thought.
var thoughtWords = [...]string{"think", "thought", "thinking", "reasoning", "segment", "intent"}

// isThoughtWord reports whether the string token t equals one of
// thoughtWords, ignoring case.
func (d *decoder) isThoughtWord(t token) bool {
	if t.kind != '"' {
		return false
	}
	b := t.raw
	if t.fl != 0 {
		var buf [32]byte
		b = appendUnquoted(buf[:0], b)
	}
	if len(b) < 5 || len(b) > 16 {
		return false
	}
	var low [16]byte
	for i, c := range b {
		if c >= utf8.RuneSelf {
			for _, w := range thoughtWords {
				if strings.EqualFold(string(b), w) {
					return true
				}
			}
			return false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	switch string(low[:len(b)]) {
	case "think", "thought", "thinking", "reasoning", "segment", "intent":
		return true
	}
	return false
}
