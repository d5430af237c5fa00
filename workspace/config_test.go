package workspace_test

import (
	"strings"
	"testing"

	"github.com/acpgw/gateway/workspace"
)

func TestCheckTemplate(t *testing.T) {
	for _, tc := range []struct {
		tmpl, want string // want: a part of the problem, "" = good
	}{
		{"", ""},
		{"/srv/ws/{platform}/{channel}/{thread}", ""},
		{"ws/{thread}", ""},
		{"/srv/ws/{platform}", "must contain {thread}"},
		{"/srv/{user}/{thread}", "unknown placeholder {user} (allowed: {platform} {channel} {thread})"},
		{"/srv/../{thread}", "must not contain a .. element"},
	} {
		t.Run(tc.tmpl, func(t *testing.T) {
			got := workspace.CheckTemplate(tc.tmpl)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("CheckTemplate(%q) = %q, want %q", tc.tmpl, got, tc.want)
			}
		})
	}
}

func TestBranchNames(t *testing.T) {
	repo := newRepo(t)
	m := newManager(t, t.TempDir(), 0)
	a := workspace.Agent{Mode: workspace.Worktree, Cwd: repo}
	for i, tc := range []struct{ name, want string }{
		{"Fix the login page!", "acp/fix-the-login-page"},
		{"  ..refs/heads/x.lock~^:?*[\\ ", "acp/refs-heads-x-lock"},
		{"日本語", "acp/t2"}, // no ASCII letters: the thread's id
		{strings.Repeat("a", 100), "acp/" + strings.Repeat("a", 40)},
	} {
		ws, err := m.Open(t.Context(), a, ref("t"+string(rune('0'+i))), tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if ws.Branch != tc.want {
			t.Errorf("branch for %q = %q, want %q", tc.name, ws.Branch, tc.want)
		}
	}
}
