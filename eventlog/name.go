package eventlog

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
)

const (
	// maxNameLen bounds an escaped name; longer ones are hashed. With the
	// longest suffix (".1000.ndjson") a file name stays far below the usual
	// 255-byte limit.
	maxNameLen = 160
	// hashPrefixLen is how much of the escaped id a hashed name keeps, so
	// an operator can still recognize it.
	hashPrefixLen = 64
	// emptyName names the empty session id.
	emptyName = "~empty"
	// segmentExt ends every segment file.
	segmentExt = ".ndjson"
	// lockExt ends the lock file.
	lockExt = ".lock"
)

// PathFor returns the path of the current segment of sessionID's log in dir,
// the path Open writes and OpenReader reads. It does no I/O.
func PathFor(dir, sessionID string) string {
	return filepath.Join(dir, fileName(sessionID)+segmentExt)
}

// keep reports whether c stands for itself in a file name.
func keep(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// fileName maps a session id to the name its files share (see the package
// comment). The result is never empty and contains no '/' and no '.'.
func fileName(id string) string {
	if id == "" {
		return emptyName
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(id))
	for i := 0; i < len(id); i++ {
		c := id[i]
		if keep(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xF])
	}
	s := b.String()
	if len(s) <= maxNameLen {
		return s
	}
	cut := hashPrefixLen
	// Do not split a %XX escape.
	if i := strings.LastIndexByte(s[:cut], '%'); i >= 0 && i+3 > cut {
		cut = i
	}
	sum := sha256.Sum256([]byte(id))
	return s[:cut] + "~" + hex.EncodeToString(sum[:])
}

// sessionID reverses fileName. ok is false for a hashed name or a name
// fileName does not produce.
func sessionID(name string) (id string, ok bool) {
	if name == emptyName {
		return "", true
	}
	if name == "" || len(name) > maxNameLen {
		return "", false
	}
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case keep(c):
			b = append(b, c)
		case c == '%' && i+2 < len(name):
			hi, lo := unhex(name[i+1]), unhex(name[i+2])
			if hi < 0 || lo < 0 || keep(byte(hi<<4|lo)) {
				return "", false
			}
			b = append(b, byte(hi<<4|lo))
			i += 2
		default:
			return "", false
		}
	}
	return string(b), true
}

// unhex decodes one upper-case hex digit, or returns -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
