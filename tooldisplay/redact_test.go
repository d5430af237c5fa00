package tooldisplay

import (
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		// Flags.
		{"--token space", "gh auth login --token abc123", "gh auth login --token •••"},
		{"--token equals", "tool --token=abc123 --verbose", "tool --token=••• --verbose"},
		{"--password quoted", `mysql --password "a b c" db`, "mysql --password ••• db"},
		{"--password single quoted", `x --password='a b' y`, "x --password=••• y"},
		{"--github-token", "ci --github-token abc", "ci --github-token •••"},
		{"--api-key", "x --api-key k1 y", "x --api-key ••• y"},
		{"--client-secret", "x --client-secret=s1", "x --client-secret=•••"},
		{"flag without value", "x --token --verbose", "x --token --verbose"},
		{"--max-tokens stays", "llm --max-tokens 100", "llm --max-tokens 100"},
		{"short flags stay", "mysql -u root -p db", "mysql -u root -p db"},

		// Headers.
		{"bearer", `curl -H "Authorization: Bearer abc.def-ghi" x`, `curl -H "Authorization: Bearer •••" x`},
		{"bearer lower case", `authorization: bearer abc`, `authorization: bearer •••`},
		{"basic", `Authorization: Basic dXNlcjpwYXNz`, `Authorization: Basic •••`},
		{"token scheme", `-H 'Authorization: token abc'`, `-H 'Authorization: token •••'`},
		{"no scheme", `Authorization: abc`, `Authorization: •••`},
		{"x-api-key", `-H "x-api-key: abc"`, `-H "x-api-key: •••"`},

		// Environment assignments.
		{"github token", "GITHUB_TOKEN=abc make", "GITHUB_TOKEN=••• make"},
		{"api key", "X_API_KEY=abc ./run", "X_API_KEY=••• ./run"},
		{"anthropic key", "export ANTHROPIC_API_KEY='k y'", "export ANTHROPIC_API_KEY=•••"},
		{"secret", "AWS_SECRET_ACCESS_KEY=abc/def", "AWS_SECRET_ACCESS_KEY=•••"},
		{"password", "PASSWORD=hunter2 psql", "PASSWORD=••• psql"},
		{"db password", `DB_PASSWORD="x y" up`, "DB_PASSWORD=••• up"},
		{"quotes inside the value", `A_TOKEN=ab"c d"e f`, "A_TOKEN=••• f"},
		{"empty quotes then text", "TOKEN=''0 x", "TOKEN=••• x"},
		{"unbalanced quote", `A_SECRET="abc def`, "A_SECRET=••• def"},
		{"token prefix", "TOKEN_FILE=/run/t", "TOKEN_FILE=•••"},
		{"max tokens stays", "MAX_TOKENS=100", "MAX_TOKENS=100"},
		{"other env stays", "GOFLAGS=-race CGO_ENABLED=0 go test", "GOFLAGS=-race CGO_ENABLED=0 go test"},

		// URLs.
		{"url password", "git clone https://me:hunter2@github.com/x/y", "git clone https://me:•••@github.com/x/y"},
		{"db url password", "psql postgres://admin:p%40ss@db:5432/app", "psql postgres://admin:•••@db:5432/app"},
		{"url without password", "curl https://me@example.com:8080/a@b", "curl https://me@example.com:8080/a@b"},
		{"url with port", "curl http://localhost:8080/x", "curl http://localhost:8080/x"},
		{"query token", "curl 'https://x/api?access_token=abc&page=2'", "curl 'https://x/api?access_token=•••&page=2'"},
		{"query key", "https://x/maps?key=abc", "https://x/maps?key=•••"},
		{"query other stays", "https://x/?q=go&page=2", "https://x/?q=go&page=2"},

		// Token shapes.
		{"openai", "use sk-proj-abcdefghijklmnop123 now", "use ••• now"},
		{"anthropic", "sk-ant-api03-AbCdEfGhIjKlMnOpQrSt-xyz", "•••"},
		{"github classic", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "•••"},
		{"github oauth", "gho_abcdefghijklmnopqrstuvwxyz", "•••"},
		{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "•••"},
		{"gitlab", "glpat-abcdefghij0123456789", "•••"},
		{"slack bot", "xoxb-1234567890-1234567890-abcdefghijkl", "•••"},
		{"slack user", "xoxp-1234567890-abcdef", "•••"},
		{"slack app", "xapp-1-A0123456789-0123456789-abcdef", "•••"},
		{"aws key id", "AKIAIOSFODNN7EXAMPLE", "•••"},
		{"google key", "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234", "•••"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc_DEF-123", "•••"},
		{"stripe", "sk_live_abcdefghijklmnop", "•••"},

		// Things that look a little like secrets but are not.
		{"plain command", "go test -race ./...", "go test -race ./..."},
		{"sk word", "pip install scikit-learn sk-learn", "pip install scikit-learn sk-learn"},
		{"task name", "task-abcdefghijklmnopqrstu", "task-abcdefghijklmnopqrstu"},
		{"short ghp", "ghp_short", "ghp_short"},
		{"empty", "", ""},

		// A replacement completes a match of an earlier pattern: Redact
		// repeats until nothing changes, so a second call changes nothing.
		{"query value then assignment", "&TOKEN=--\xff\"", "&TOKEN=•••"},
		{"github token then assignment", "ghp_aaaaaaaaaaaaaaaaaaaa_TOKEN=\xe2x", "•••_TOKEN=•••"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Redact(tc.in)
			if got != tc.want {
				t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact(Redact(%q)) = %q, want %q", tc.in, again, got)
			}
		})
	}
}

func BenchmarkRedact(b *testing.B) {
	s := "cd /home/me/src/gateway && GOFLAGS=-race go test ./... 2>&1 | tee /tmp/out.log | " + strings.Repeat("x", 60)
	b.ReportAllocs()
	for b.Loop() {
		Redact(s)
	}
}

func FuzzRedact(f *testing.F) {
	for _, s := range []string{"--token abc", "A_TOKEN='x y' b", "https://u:p@h/?key=1", "Authorization: Bearer x", "sk-abcdefghijklmnopqrstu"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Redact(s)
		if again := Redact(got); again != got {
			t.Fatalf("Redact(Redact(%q)) = %q, want %q", s, again, got)
		}
		// Whatever comes before it, a secret in a word of its own is hidden.
		withSecret := s + " GITHUB_TOKEN=fuzzsecret1234"
		if got := Redact(withSecret); strings.Contains(got, "fuzzsecret1234") {
			t.Fatalf("Redact(%q) = %q, the token's value is visible", withSecret, got)
		}
	})
}
