package demoagent

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParseCommand(t *testing.T) {
	tests := []struct {
		text, wantName, wantArg string
	}{
		{"", "", ""},
		{"hello", "hello", ""},
		{"  Slow 20", "slow", "20"},
		{"/HELP", "help", ""},
		{"echo  keep  inner  spaces \n", "echo", "keep  inner  spaces \n"},
		{"echo\tline one\nline two", "echo", "line one\nline two"},
		{"title\u00a0Café", "title", "Café"},
		{"ignore-cancel 3", "ignore-cancel", "3"},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			name, arg := parseCommand(tc.text)
			if name != tc.wantName || arg != tc.wantArg {
				t.Errorf("parseCommand(%q) = %q, %q; want %q, %q", tc.text, name, arg, tc.wantName, tc.wantArg)
			}
		})
	}
}

func TestParseCount(t *testing.T) {
	tests := []struct {
		arg     string
		want    int
		wantErr bool
	}{
		{"", 7, false},
		{"  ", 7, false},
		{"1", 1, false},
		{" 100 ", 100, false},
		{"0", 0, true},
		{"-3", 0, true},
		{"101", 0, true},
		{"ten", 0, true},
		{"99999999999999999999", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.arg, func(t *testing.T) {
			got, err := parseCount(tc.arg, 7, 100)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("parseCount(%q) = %d, %v; want %d, error %v", tc.arg, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"", "hello", " /Echo  a b ", "slow 20", "burst -1", "title\u2003x", "\xff\xfe echo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		name, arg := parseCommand(text)
		if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
			t.Errorf("name %q has white space", name)
		}
		if !strings.HasSuffix(text, arg) {
			t.Errorf("arg %q is not a suffix of %q", arg, text)
		}
		if arg != "" {
			if r, _ := utf8.DecodeRuneInString(arg); unicode.IsSpace(r) {
				t.Errorf("arg %q starts with white space", arg)
			}
		}
		if n, err := parseCount(arg, 5, 1000); err == nil && (n < 1 || n > 1000) {
			t.Errorf("parseCount(%q) = %d, outside [1, 1000]", arg, n)
		}
		_ = findScenario(name) // never fails: unknown names get hello
	})
}

func TestSplitters(t *testing.T) {
	for _, s := range []string{helloText, snapshotText, markdownDoc, "", "one", "  two  spaces  "} {
		words := splitWords(s, 10)
		if got := strings.Join(words, ""); got != s {
			t.Errorf("splitWords joined = %q, want %q", got, s)
		}
		if len(words) > 10 {
			t.Errorf("splitWords(%.20q, 10) made %d chunks, want at most 10", s, len(words))
		}
		sized := splitSizes(s, 5, 20)
		if got := strings.Join(sized, ""); got != s {
			t.Errorf("splitSizes joined = %q, want %q", got, s)
		}
		for _, c := range sized {
			if !utf8.ValidString(c) {
				t.Errorf("splitSizes cut a character: %q", c)
			}
		}
	}
	if diff := cmp.Diff(splitSizes(markdownDoc, 5, 20), splitSizes(markdownDoc, 5, 20)); diff != "" {
		t.Errorf("splitSizes is not deterministic:\n%s", diff)
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    Options
		wantErr string
	}{
		{name: "defaults", want: Options{}},
		{name: "flags", args: []string{"--state-dir", "/s", "--auth-env", "TOKEN"}, want: Options{StateDir: "/s", AuthEnv: "TOKEN"}},
		{name: "env", env: map[string]string{EnvStateDir: "/e", EnvAuthEnv: "E_TOKEN"}, want: Options{StateDir: "/e", AuthEnv: "E_TOKEN"}},
		{name: "flag beats env", args: []string{"-state-dir=/f"}, env: map[string]string{EnvStateDir: "/e"}, want: Options{StateDir: "/f"}},
		{name: "capabilities", args: []string{"--no-load", "--no-images"}, want: Options{NoLoad: true, NoImages: true}},
		{name: "legacy modes", args: []string{"--legacy-modes"}, want: Options{LegacyModes: true}},
		{name: "like gemini", args: []string{"--like-gemini"}, want: Options{LegacyModes: true, LikeGemini: true}},
		{name: "login message", args: []string{"--login-message", "run x login"}, want: Options{LoginMessage: "run x login"}},
		{name: "unknown flag", args: []string{"--verbose"}, wantErr: "flag provided but not defined"},
		{name: "positional", args: []string{"extra"}, wantErr: `unexpected argument "extra"`},
		{name: "bad env name", args: []string{"--auth-env", "A=B"}, wantErr: "not an environment variable name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFlags(tc.args, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseFlags error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b Options) bool {
				return a.StateDir == b.StateDir && a.AuthEnv == b.AuthEnv && a.NoLoad == b.NoLoad && a.NoImages == b.NoImages && a.LegacyModes == b.LegacyModes &&
					a.LikeGemini == b.LikeGemini && a.LoginMessage == b.LoginMessage
			})); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseFlagsHelp(t *testing.T) {
	_, err := ParseFlags([]string{"-h"})
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("ParseFlags(-h) = %v, want flag.ErrHelp", err)
	}
	for _, want := range []string{"-state-dir", EnvStateDir, "-auth-env", EnvAuthEnv} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("usage lacks %q:\n%s", want, err)
		}
	}
}

func TestStore(t *testing.T) {
	dir := t.TempDir()
	st := store{dir: dir}
	rec := record{Version: recordVersion, ID: newSessionID(), Cwd: "/w", Mode: modePlan, Title: "t",
		History: []message{{roleUser, "hi"}, {roleAgent, "hello"}}}
	if err := st.save(rec); err != nil {
		t.Fatal(err)
	}
	got, err := st.load(rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rec, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	os.WriteFile(filepath.Join(dir, "demo-aaaaaaaaaaaa.json"), []byte(`{"version":1,"id":"demo-bbbbbbbbbbbb","mode":"default"}`), 0o600)
	for _, tc := range []struct {
		id        string
		wantNoSes bool
	}{
		{"demo-000000000000", true},
		{"../" + rec.ID, true},
		{"DEMO-000000000000", true},
		{"demo-aaaaaaaaaaaa", false}, // a file holding another id
	} {
		_, err := st.load(tc.id)
		if err == nil || errors.Is(err, errNoSession) != tc.wantNoSes {
			t.Errorf("load(%q) = %v, want an error (no such session: %v)", tc.id, err, tc.wantNoSes)
		}
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"version":1,"id":"demo-0123456789ab","cwd":"/w","mode":"default","history":[{"role":"user","text":"hi"}]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"version":1,"id":"demo-0123456789ab","mode":"plan","history":[{"role":"system"}]}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b)
		if err != nil {
			return
		}
		if !validSessionID(r.ID) || !validMode(r.Mode) || r.Version != recordVersion {
			t.Errorf("decodeRecord accepted %+v", r)
		}
		for _, m := range r.History {
			if m.Role != roleUser && m.Role != roleAgent {
				t.Errorf("decodeRecord accepted role %q", m.Role)
			}
		}
		if strings.ContainsAny(r.ID, `/\.`) {
			t.Errorf("id %q could leave the state dir", r.ID)
		}
	})
}
