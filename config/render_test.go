package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels/discord"
	"github.com/acpgw/gateway/channels/slack"
	"github.com/acpgw/gateway/channels/web"
	"github.com/acpgw/gateway/projector"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

const secretsYAML = `
channels:
  web: {token: web-secret-1}
  discord: {token: "${DISCORD_TOKEN}"}
  slack: {appToken: xapp-secret-2, botToken: "${SLACK_BOT_TOKEN}"}
agents:
  list:
    codex:
      command: [npx, "@zed-industries/codex-acp"]
      authMethod: openai-api-key
      env: {OPENAI_API_KEY: "${OPENAI_API_KEY}", EMPTY: ""}
`

var secretEnv = []string{
	"DISCORD_TOKEN=discord-secret-3",
	"SLACK_BOT_TOKEN=xoxb-secret-4",
	"OPENAI_API_KEY=sk-secret-5",
}

func TestRedactedHidesSecrets(t *testing.T) {
	c := mustLoad(t, secretsYAML, secretEnv, "channels.web.listen=127.0.0.1:9000")
	got := Redacted(c)
	for _, secret := range []string{"-secret-", "${"} {
		if strings.Contains(got, secret) {
			t.Errorf("Redacted holds %q:\n%s", secret, got)
		}
	}
	for _, want := range []string{
		"token: '***'", "appToken: xapp-***", "botToken: xoxb-***", "OPENAI_API_KEY: '***'",
		`EMPTY: ""`, "listen: 127.0.0.1:9000", "authMethod: openai-api-key",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Redacted lacks %q:\n%s", want, got)
		}
	}
}

// TestRedactedLoadsBack: the text is a complete configuration; loaded
// again it gives the same settings, secrets masked.
func TestRedactedLoadsBack(t *testing.T) {
	c := mustLoad(t, overridesYAML+`
agents:
  default: codex
  list:
    codex: {command: [npx, x], env: {K: v}, cwd: /src}
access:
  discord: {guilds: ["1"], allowBots: true}
channels:
  web: {enabled: true, users: {ann: ann-token}}
  discord: {token: t, dms: true}
  slack: {appToken: xapp-1, botToken: xoxb-2}
abort: {add: [enough, "$${LITERAL}"]}
`, nil)
	back, err := LoadOptions{Platforms: testPlatforms, Path: writeYAML(t, Redacted(c)), Environ: testEnv}.Load()
	if err != nil {
		t.Fatalf("load Redacted output: %v\n%s", err, Redacted(c))
	}
	want := c
	want.Agents.List["codex"].Env["K"] = Mask
	ignore := cmpopts.IgnoreUnexported(Config{}, Channels{}, Overrides{})
	if diff := cmp.Diff(want, back, ignore, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The platforms' sections, one by one.
	wd := SectionOf[discord.Config](c, discord.Platform)
	wd.Token = Mask
	ws := SectionOf[slack.Config](c, slack.Platform)
	ws.AppToken, ws.BotToken = "xapp-"+Mask, "xoxb-"+Mask
	ww := SectionOf[web.Config](c, web.Platform)
	ww.Users = map[string]string{"ann": Mask}
	for _, d := range []string{
		cmp.Diff(wd, SectionOf[discord.Config](back, discord.Platform)),
		cmp.Diff(ws, SectionOf[slack.Config](back, slack.Platform)),
		cmp.Diff(ww, SectionOf[web.Config](back, web.Platform)),
	} {
		if d != "" {
			t.Errorf("section (-want +got):\n%s", d)
		}
	}
	if got, want := Redacted(back), Redacted(c); got != want {
		t.Errorf("Redacted of the loaded output differs:\n%s\nwant:\n%s", got, want)
	}
}

// TestEverySecretIsMasked: every field tagged secret is masked, so a new
// secret cannot be forgotten in Redacted.
func TestEverySecretIsMasked(t *testing.T) {
	var secretKeys []string
	for _, k := range Keys(testPlatforms...) {
		if isSecret(k) {
			secretKeys = append(secretKeys, k)
		}
	}
	want := []string{"agents.list.*.env.*", "channels.discord.token", "channels.slack.appToken", "channels.slack.botToken", "channels.web.token", "channels.web.users.*"}
	if diff := cmp.Diff(want, secretKeys); diff != "" {
		t.Errorf("secret keys (-want +got):\n%s", diff)
	}
}

// isSecret reports whether the key pattern is a field tagged secret, or
// inside one.
func isSecret(key string) bool {
	segs := strings.Split(key, ".")
	// The top: the platforms' sections are seen through their views.
	v := reflect.ValueOf(Default(testPlatforms...))
	i := slices.IndexFunc(fieldsOf(v.Type()), func(f field) bool { return f.name == segs[0] })
	if i < 0 {
		return false
	}
	f := fieldsOf(v.Type())[i]
	if f.secret {
		return true
	}
	top := v.FieldByIndex(f.index)
	if view, ok := asView(top); ok {
		top = view
	}
	t := top.Type()
	for _, seg := range segs[1:] {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch t.Kind() {
		case reflect.Struct:
			i := slices.IndexFunc(fieldsOf(t), func(f field) bool { return f.name == seg })
			if i < 0 {
				return false
			}
			f := fieldsOf(t)[i]
			if f.secret {
				return true
			}
			t = t.FieldByIndex(f.index).Type
		case reflect.Map:
			t = t.Elem()
		default:
			return false
		}
	}
	return false
}

func TestExampleFile(t *testing.T) {
	path := filepath.Join("..", "config.example.yaml")
	c, err := LoadOptions{Platforms: testPlatforms, Path: path, Environ: testEnv}.Load()
	if err != nil {
		t.Fatalf("config.example.yaml: %v", err)
	}
	// As it stands, the example gives the defaults.
	d := mustLoad(t, "", nil)
	d.ACP.Stream.TagVisibility = projector.DefaultTagVisibility() // listed in full
	if diff := cmp.Diff(d, c, cmpopts.IgnoreUnexported(Config{}, Channels{}, Overrides{}), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("the example's values differ from the defaults (-default +example):\n%s", diff)
	}
	if diff := cmp.Diff(Redacted(d), Redacted(c)); diff != "" {
		t.Errorf("the example's platform sections or overrides differ from the defaults (-default +example):\n%s", diff)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	documented := documentedKeys(string(data))
	for _, k := range Keys(testPlatforms...) {
		ks := strings.Split(k, ".")
		if !slices.ContainsFunc(documented, func(d []string) bool { return match(ks, d) }) {
			t.Errorf("config.example.yaml does not document %s", k)
		}
	}
	// Commented-out examples are valid too.
	for _, agent := range []string{"claude-agent-acp", "codex-acp", "gemini --experimental-acp", "demo-agent"} {
		if !strings.Contains(strings.ReplaceAll(string(data), ", ", " "), agent) {
			t.Errorf("config.example.yaml lacks the %s example", agent)
		}
	}
	uncommented := uncomment(string(data))
	env := append([]string{"ANTHROPIC_API_KEY=a", "OPENAI_API_KEY=o", "GEMINI_API_KEY=g", "ANN_TOKEN=a", "BOB_TOKEN=b"}, testEnv...)
	if _, err := (LoadOptions{Platforms: testPlatforms, Path: writeYAML(t, uncommented), Environ: env}).Load(); err != nil {
		t.Errorf("config.example.yaml with its examples uncommented: %v\n%s", err, uncommented)
	}
}

var keyLine = regexp.MustCompile(`^(\s*)("[^"]*"|[A-Za-z0-9_.*-]+):(\s|$)`)

// documentedKeys lists the key paths of a YAML text, from its lines and its
// commented-out lines ("# key: value", indented after the "# ").
func documentedKeys(text string) [][]string {
	type level struct {
		indent int
		key    string
	}
	var stack []level
	var out [][]string
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimLeft(line, " ")
		indent := len(line) - len(trimmed)
		if rest, ok := strings.CutPrefix(trimmed, "#"); ok {
			rest = strings.TrimPrefix(rest, " ")
			inner := strings.TrimLeft(rest, " ")
			indent += len(rest) - len(inner)
			trimmed = inner
		}
		m := keyLine.FindStringSubmatch(strings.Repeat(" ", indent) + trimmed)
		if m == nil {
			continue
		}
		for len(stack) > 0 && stack[len(stack)-1].indent >= indent {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, level{indent, strings.Trim(m[2], `"`)})
		path := make([]string, len(stack))
		for i, l := range stack {
			path[i] = l.key
		}
		out = append(out, path)
	}
	return out
}

// uncomment turns the example's commented-out YAML into YAML: a "# " line
// whose text is a key line, or continues one, loses its "# ".
func uncomment(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		rest, ok := strings.CutPrefix(trimmed, "# ")
		if !ok || !keyLine.MatchString(rest) {
			continue
		}
		indent := line[:len(line)-len(trimmed)]
		lines[i] = indent + rest
	}
	return strings.Join(lines, "\n")
}
