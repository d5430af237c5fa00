package slack

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// manifest is the part of a Slack app manifest the adapter depends on.
type manifest struct {
	Features struct {
		AppHome struct {
			MessagesTabEnabled         bool `yaml:"messages_tab_enabled"`
			MessagesTabReadOnlyEnabled bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
		SlashCommands []struct {
			Command string `yaml:"command"`
		} `yaml:"slash_commands"`
		BotUser struct {
			DisplayName string `yaml:"display_name"`
		} `yaml:"bot_user"`
	} `yaml:"features"`
	OAuthConfig struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		EventSubscriptions struct {
			BotEvents []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		Interactivity struct {
			IsEnabled bool `yaml:"is_enabled"`
		} `yaml:"interactivity"`
		SocketModeEnabled bool `yaml:"socket_mode_enabled"`
	} `yaml:"settings"`
}

// TestManifest checks that slack-app-manifest.yaml at the repository root
// asks for what the adapter uses: Socket Mode, interactivity (buttons),
// the events it handles and every scope it calls methods with.
func TestManifest(t *testing.T) {
	data, err := os.ReadFile("../../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("parse the manifest: %v", err)
	}
	if !m.Settings.SocketModeEnabled {
		t.Error("settings.socket_mode_enabled is not true")
	}
	if !m.Settings.Interactivity.IsEnabled {
		t.Error("settings.interactivity.is_enabled is not true (prompt buttons need it)")
	}
	if !m.Features.AppHome.MessagesTabEnabled || m.Features.AppHome.MessagesTabReadOnlyEnabled {
		t.Error("features.app_home must enable a writable messages tab (direct messages)")
	}
	if m.Features.BotUser.DisplayName == "" {
		t.Error("features.bot_user.display_name is empty")
	}
	if len(m.Features.SlashCommands) != 1 || !strings.HasPrefix(m.Features.SlashCommands[0].Command, "/") {
		t.Errorf("features.slash_commands = %+v, want the one command that starts a thread", m.Features.SlashCommands)
	}
	scopes := m.OAuthConfig.Scopes.Bot
	for s, what := range botScopes {
		if !slices.Contains(scopes, s) {
			t.Errorf("oauth_config.scopes.bot lacks %s, needed for %s", s, what)
		}
	}
	if !slices.Contains(scopes, userGroupsScope) {
		t.Errorf("oauth_config.scopes.bot lacks %s, needed for Options.UserGroups", userGroupsScope)
	}
	for _, s := range scopes {
		if _, ok := botScopes[s]; !ok && s != userGroupsScope {
			t.Errorf("oauth_config.scopes.bot lists %s, which the adapter does not use", s)
		}
	}
	for _, ev := range []string{"app_mention", "message.channels", "message.groups", "message.im", "message.mpim", "agent_session_stopped", "reaction_added", "reaction_removed", "channel_deleted", "channel_archived", "group_deleted", "group_archived"} {
		if !slices.Contains(m.Settings.EventSubscriptions.BotEvents, ev) {
			t.Errorf("settings.event_subscriptions.bot_events lacks %s", ev)
		}
	}
}
