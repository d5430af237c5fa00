package eventlog

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
)

func TestFileName(t *testing.T) {
	long := strings.Repeat("é", 100) // escapes to 600 bytes
	longSum := sha256.Sum256([]byte(long))
	tests := []struct {
		name string
		id   string
		want string
	}{
		{"plain", "sess_123-ABC", "sess_123-ABC"},
		{"uuid", "0b6f1c4e-8a52-4b8e-9d3c-6a1f2e7b9c10", "0b6f1c4e-8a52-4b8e-9d3c-6a1f2e7b9c10"},
		{"dot", ".", "%2E"},
		{"dotdot", "..", "%2E%2E"},
		{"dot inside", "a.1", "a%2E1"},
		{"slash", "../etc/passwd", "%2E%2E%2Fetc%2Fpasswd"},
		{"backslash", `a\b`, "a%5Cb"},
		{"percent", "%41", "%2541"},
		{"tilde", "~empty", "%7Eempty"},
		{"space and nul", "a b\x00", "a%20b%00"},
		{"unicode", "ü", "%C3%BC"},
		{"line separator", "\u2028", "%E2%80%A8"},
		{"empty", "", "~empty"},
		// The prefix stops before the escape that would cross 64 bytes.
		{"long", long, strings.Repeat("%C3%A9", 10) + "%C3~" + hex.EncodeToString(longSum[:])},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fileName(tc.id); got != tc.want {
				t.Errorf("fileName(%q) = %q, want %q", tc.id, got, tc.want)
			}
		})
	}
}

func TestSessionID(t *testing.T) {
	tests := []struct {
		name   string
		file   string
		wantID string
		wantOK bool
	}{
		{"plain", "abc", "abc", true},
		{"escaped", "a%2E1%2F", "a.1/", true},
		{"empty", "~empty", "", true},
		{"hashed", "ab~0123", "", false},
		{"lower hex", "a%2e", "", false},
		{"needless escape", "%41", "", false},
		{"short escape", "a%2", "", false},
		{"dot", "a.b", "", false},
		{"nothing", "", "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, ok := sessionID(tc.file)
			if id != tc.wantID || ok != tc.wantOK {
				t.Errorf("sessionID(%q) = %q, %v; want %q, %v", tc.file, id, ok, tc.wantID, tc.wantOK)
			}
		})
	}
}

func TestPathFor(t *testing.T) {
	got := PathFor("/var/lib/gw/events", "../x")
	want := filepath.Join("/var/lib/gw/events", "%2E%2E%2Fx.ndjson")
	if got != want {
		t.Errorf("PathFor = %q, want %q", got, want)
	}
}

func FuzzFileName(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a.1", "a/b", "~empty", "%2E", "\u2028", strings.Repeat("x", 161), strings.Repeat("/", 80)} {
		f.Add(s, s+".")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		name := fileName(a)
		if name == "" || name == "." || name == ".." {
			t.Fatalf("fileName(%q) = %q", a, name)
		}
		if len(name) > maxNameLen {
			t.Fatalf("fileName(%q) is %d bytes, over %d", a, len(name), maxNameLen)
		}
		for i := 0; i < len(name); i++ {
			if c := name[i]; !keep(c) && c != '%' && c != '~' {
				t.Fatalf("fileName(%q) = %q holds byte %q", a, name, c)
			}
		}
		if dir := filepath.Dir(PathFor("d", a)); dir != "d" {
			t.Fatalf("PathFor(d, %q) lies in %q", a, dir)
		}
		if a != b && fileName(b) == name {
			t.Fatalf("fileName(%q) = fileName(%q) = %q", a, b, name)
		}
		prefix, _, hashed := strings.Cut(name, "~")
		id, ok := sessionID(name)
		switch {
		case a == "":
			if !ok || id != "" {
				t.Fatalf("sessionID(%q) = %q, %v; want \"\", true", name, id, ok)
			}
		case !hashed:
			if !ok || id != a {
				t.Fatalf("sessionID(%q) = %q, %v; want %q, true", name, id, ok, a)
			}
		default:
			p, ok := sessionID(prefix)
			if !ok || !strings.HasPrefix(a, p) {
				t.Fatalf("hashed name %q: prefix %q decodes to %q, %v; want a prefix of %q", name, prefix, p, ok, a)
			}
		}
	})
}
