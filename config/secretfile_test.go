package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/google/go-cmp/cmp"
)

func writeSecret(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecretFiles reads every kind of secret setting from a file: the
// platforms' tokens, web users and an agent's env, from the file, the
// environment and --set, with systemd's ${CREDENTIALS_DIRECTORY}; one
// trailing newline is cut, nothing else.
func TestSecretFiles(t *testing.T) {
	creds := t.TempDir()
	writeSecret(t, creds, "discord-token", "MTIz.discord\n")
	writeSecret(t, creds, "slack-app", "xapp-1-app\r\n")
	writeSecret(t, creds, "slack-bot", "xoxb-bot")
	writeSecret(t, creds, "ann", "ann-token\n\n")
	writeSecret(t, creds, "openai", "sk-openai\n")
	web := writeSecret(t, creds, "web", " web token \n")
	c := mustLoad(t, `
channels:
  discord: {token: "file:${CREDENTIALS_DIRECTORY}/discord-token"}
  slack: {appToken: "file:${CREDENTIALS_DIRECTORY}/slack-app"}
  web: {enabled: true, users: {ann: "file:${CREDENTIALS_DIRECTORY}/ann"}}
agents:
  list:
    codex:
      command: [codex-acp]
      env: {OPENAI_API_KEY: "file:${CREDENTIALS_DIRECTORY}/openai", PLAIN: "${PLAIN}"}
      cwd: "file:/not/a/secret"
`, []string{
		"CREDENTIALS_DIRECTORY=" + creds,
		"GATEWAY_CHANNELS__SLACK__BOTTOKEN=file:" + filepath.Join(creds, "slack-bot"),
		"PLAIN=plain-value",
	}, "channels.web.token=file:"+web)
	got := map[string]string{
		"discord":   SectionOf[discord.Config](c, "discord").Token,
		"slack app": SectionOf[slack.Config](c, "slack").AppToken,
		"slack bot": SectionOf[slack.Config](c, "slack").BotToken,
		"web":       SectionOf[webConfig](c, "web").Token,
		"ann":       SectionOf[webConfig](c, "web").Users["ann"],
		"openai":    c.Agents.List["codex"].Env["OPENAI_API_KEY"],
		"plain":     c.Agents.List["codex"].Env["PLAIN"],
		"cwd":       c.Agents.List["codex"].Cwd,
	}
	want := map[string]string{
		"discord":   "MTIz.discord",
		"slack app": "xapp-1-app",
		"slack bot": "xoxb-bot",
		"web":       " web token ",
		"ann":       "ann-token\n",
		"openai":    "sk-openai",
		"plain":     "plain-value",
		// Not a secret setting: the text it is.
		"cwd": "file:/not/a/secret",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	// The variable a secret was expanded from is a secret the gateway
	// holds; the credentials directory (a path) is not.
	if diff := cmp.Diff([]string{"PLAIN"}, c.SecretVars()); diff != "" {
		t.Errorf("SecretVars (-want +got):\n%s", diff)
	}
	if r := Redacted(c); strings.Contains(r, "sk-openai") || strings.Contains(r, "MTIz.discord") {
		t.Errorf("Redacted shows a secret read from a file:\n%s", r)
	}
}

type webConfig = web.Config

// TestSecretFileErrors: a secret file that cannot be used is an error
// naming the key and the path, never the content, reported once (not
// again as a missing token).
func TestSecretFileErrors(t *testing.T) {
	dir := t.TempDir()
	empty := writeSecret(t, dir, "empty", "\n")
	big := writeSecret(t, dir, "big", strings.Repeat("x", maxSecretFile+1))
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := writeSecret(t, dir, "unreadable", "hidden-content")
	if err := os.Chmod(unreadable, 0); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, value, want string
	}{
		{"missing", "file:" + filepath.Join(dir, "nope"), `channels.discord.token: cannot read the secret file: stat ` + filepath.Join(dir, "nope") + `: no such file or directory`},
		{"relative", "file:token.txt", `channels.discord.token: file: wants an absolute path (such as file:${CREDENTIALS_DIRECTORY}/token), got "token.txt"`},
		{"empty", "file:" + empty, `channels.discord.token: the secret file ` + empty + ` is empty`},
		{"too big", "file:" + big, `channels.discord.token: the secret file ` + big + ` is larger than 64 KiB`},
		{"directory", "file:" + dir, `channels.discord.token: the secret file ` + dir + ` is not a regular file`},
		{"fifo", "file:" + fifo, `channels.discord.token: the secret file ` + fifo + ` is not a regular file`},
		{"unset variable", "file:${CREDENTIALS_DIRECTORY}/x", `channels.discord.token: environment variable CREDENTIALS_DIRECTORY is not set (referenced as ${CREDENTIALS_DIRECTORY})`},
	}
	if os.Geteuid() != 0 { // root reads a mode 0 file
		tests = append(tests, struct{ name, value, want string }{"unreadable", "file:" + unreadable,
			`channels.discord.token: cannot read the secret file: open ` + unreadable + `: permission denied`})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, "channels: {discord: {token: \""+tc.value+"\"}}\n", nil)
			if err == nil {
				t.Fatal("loaded")
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("error\n got %s\nwant %s", got, tc.want)
			}
			if strings.Contains(err.Error(), "hidden-content") || strings.Contains(err.Error(), "xxxx") {
				t.Errorf("the error shows the file's content: %v", err)
			}
		})
	}
}

// TestSecretFileReload: a reload reads the file again (a rotated
// token).
func TestSecretFileReload(t *testing.T) {
	dir := t.TempDir()
	p := writeSecret(t, dir, "token", "first\n")
	yaml := "channels: {discord: {token: \"file:" + p + "\"}}\n"
	if got := SectionOf[discord.Config](mustLoad(t, yaml, nil), "discord").Token; got != "first" {
		t.Fatalf("token = %q", got)
	}
	writeSecret(t, dir, "token", "second\n")
	if got := SectionOf[discord.Config](mustLoad(t, yaml, nil), "discord").Token; got != "second" {
		t.Errorf("after the change, token = %q", got)
	}
}

func TestSecretKeys(t *testing.T) {
	want := []string{
		"agents.list.*.env.*",
		"channels.discord.token",
		"channels.slack.appToken",
		"channels.slack.botToken",
		"channels.web.token",
		"channels.web.users.*",
	}
	if diff := cmp.Diff(want, secretKeys(Default(testPlatforms...))); diff != "" {
		t.Errorf("secret keys (-want +got):\n%s", diff)
	}
}

// FuzzReferences: the names references finds in a string are exactly the
// variables expand looks up in it.
func FuzzReferences(f *testing.F) {
	for _, seed := range []string{"${A}", "x$${B}${C}", "${A}${A}-${B", "file:${CREDENTIALS_DIRECTORY}/t", "${1}", "$$${A}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var looked []string
		_, err := expand(s, func(name string) (string, bool) {
			looked = append(looked, name)
			return "v", true
		})
		if err != nil {
			return // malformed: not expanded at all
		}
		if diff := cmp.Diff(looked, references(s)); diff != "" {
			t.Errorf("references(%q) (-expand +references):\n%s", s, diff)
		}
	})
}
