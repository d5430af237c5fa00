package agent_test

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/acpgw/gateway/agent"
	"github.com/google/go-cmp/cmp"
)

// lockedBuffer is a log sink safe for the agent's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestAgentSeesNoSecret(t *testing.T) {
	secrets := map[string]string{
		"DISCORD_TOKEN":              "discord-bot-token-MTIzNDU2Nzg5MDEy",
		"SLACK_BOT_TOKEN":            "xoxb-1111-2222-slack-bot-token",
		"SLACK_APP_TOKEN":            "xapp-1-A111-slack-app-token",
		"GATEWAY_CHANNELS_WEB_TOKEN": "web-token-0123456789abcdef",
		"ANTHROPIC_API_KEY":          "sk-ant-another-agents-key-0123456789",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	// A listed variable that merely copies a secret, and one that holds it.
	t.Setenv("COPY_OF_TOKEN", secrets["DISCORD_TOKEN"])
	t.Setenv("AUTH_HEADER", "Bot "+secrets["DISCORD_TOKEN"])
	t.Setenv("KEEP_ME", "kept")
	t.Setenv("NOT_LISTED", "unlisted")
	t.Setenv("LC_ALL", "C.UTF-8")

	spec := rawSpec("OWN_KEY=own-key-of-this-agent")
	spec.InheritEnv = []string{"KEEP_ME", "COPY_OF_TOKEN", "AUTH_HEADER", "DISCORD_TOKEN", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "GATEWAY_*", "ANTHROPIC_API_KEY"}
	spec.Secrets = []string{secrets["DISCORD_TOKEN"], secrets["SLACK_BOT_TOKEN"], secrets["SLACK_APP_TOKEN"], secrets["GATEWAY_CHANNELS_WEB_TOKEN"], secrets["ANTHROPIC_API_KEY"]}
	spec.SecretNames = []string{"DISCORD_TOKEN", "SLACK_*_TOKEN", "GATEWAY_*"}
	var logs lockedBuffer
	p := start(t, spec, agent.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	var rec recorder
	s, err := p.NewSession(t.Context(), t.TempDir(), &rec)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	if _, err := s.Prompt(t.Context(), "env"); err != nil {
		t.Fatalf("Prompt(env): %v", err)
	}
	texts := rec.texts()
	dump := texts[len(texts)-1]
	env := strings.Split(dump, "\n")
	for k, v := range secrets {
		if strings.Contains(dump, v) {
			t.Errorf("the agent sees the secret of %s", k)
		}
	}
	for _, want := range []string{"KEEP_ME=kept", "OWN_KEY=own-key-of-this-agent", "LC_ALL=C.UTF-8", "RAW_AGENT=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("the agent's environment lacks %s", want)
		}
	}
	for _, name := range []string{"NOT_LISTED", "COPY_OF_TOKEN", "AUTH_HEADER"} {
		if strings.Contains(dump, name+"=") {
			t.Errorf("the agent's environment has %s", name)
		}
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") }) {
		t.Error("the agent's environment lacks PATH")
	}
	l := logs.String()
	for k, v := range secrets {
		if strings.Contains(l, v) {
			t.Errorf("the log holds the secret of %s", k)
		}
	}
	for _, name := range []string{"DISCORD_TOKEN", "SLACK_BOT_TOKEN", "GATEWAY_CHANNELS_WEB_TOKEN", "ANTHROPIC_API_KEY", "COPY_OF_TOKEN", "AUTH_HEADER"} {
		if !strings.Contains(l, "variable="+name+" ") {
			t.Errorf("no warning names %s; log:\n%s", name, l)
		}
	}
}

func TestSpecEnviron(t *testing.T) {
	const tok = "0123456789abcdef-token" // 22 characters
	parent := []string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C", "SECRETISH=" + tok, "WRAPPED=x" + tok + "x", "SHORT=ab", "OTHER=o", "PWD=/gateway"}
	cases := []struct {
		name     string
		spec     agent.Spec
		want     []string
		withheld []string
	}{
		{"base only", agent.Spec{}, []string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C"}, nil},
		{"inherit and env over it", agent.Spec{InheritEnv: []string{"OTHER"}, Env: []string{"HOME=/agent", "NEW=n"}},
			[]string{"PATH=/bin", "HOME=/agent", "LC_TIME=C", "OTHER=o", "NEW=n"}, nil},
		{"a secret value is withheld, whole or inside", agent.Spec{InheritEnv: []string{"SECRETISH", "WRAPPED", "OTHER"}, Secrets: []string{tok}},
			[]string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C", "OTHER=o"}, []string{"SECRETISH", "WRAPPED"}},
		{"a short secret matches only a whole value", agent.Spec{InheritEnv: []string{"SHORT", "PATH"}, Secrets: []string{"ab", "/"}},
			[]string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C"}, []string{"SHORT"}},
		{"a secret name is withheld even when listed", agent.Spec{InheritEnv: []string{"OTHER", "SECRETISH"}, SecretNames: []string{"SECRET*"}},
			[]string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C", "OTHER=o"}, []string{"SECRETISH"}},
		{"env holding a secret drops the inherited value too", agent.Spec{InheritEnv: []string{"OTHER"}, Env: []string{"OTHER=" + tok}, Secrets: []string{tok}},
			[]string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C"}, []string{"OTHER"}},
		{"PWD is the agent's directory", agent.Spec{Dir: "/srv/x"}, []string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C", "PWD=/srv/x"}, nil},
		{"a pattern inherits a family", agent.Spec{InheritEnv: []string{"OTH*"}}, []string{"PATH=/bin", "HOME=/home/g", "LC_TIME=C", "OTHER=o"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, withheld := tc.spec.Environ(parent)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("env (-want +got):\n%s", diff)
			}
			var names []string
			for _, w := range withheld {
				names = append(names, w.Name)
			}
			if diff := cmp.Diff(tc.withheld, names); diff != "" {
				t.Errorf("withheld (-want +got):\n%s", diff)
			}
		})
	}
}
