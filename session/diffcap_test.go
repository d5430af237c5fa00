package session_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/channels/channeltest"
	"github.com/acpgw/gateway/sysmsg"
	"github.com/acpgw/gateway/workspace"
)

// TestDiffCutToTheUploadLimit: /diff of a worktree whose diff is larger
// than the chat's upload limit posts its start, cut at a line within the
// limit, and says how much it left out and how to see it all (git diff
// from the start commit in the worktree).
func TestDiffCutToTheUploadLimit(t *testing.T) {
	const limit = 4096
	repo := gitRepo(t)
	dir := t.TempDir()
	m, err := workspace.New(workspace.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	spec := demoSpec(filepath.Join(dir, "demo-state"))
	spec.Dir = repo
	e := newEnv(t, envOptions{
		dir:            dir,
		spec:           &spec,
		rec:            channeltest.Options{Upload: true, Edit: true, Limits: channels.Limits{MaxMessageChars: 4000, MaxUploadBytes: limit}},
		workspaces:     m,
		agentWorkspace: func(string) workspace.Agent { return workspace.Agent{Mode: workspace.Worktree, Cwd: repo} },
		mcp:            true,
	})
	th := e.rec.Thread("big")
	e.say(th, ann, "echo start")
	e.waitEnd(th)
	w := worktreeOf(t, e, th)
	var big strings.Builder
	for i := range 1000 {
		big.WriteString(strings.Repeat("line ", 4) + string(rune('a'+i%26)) + "\n")
	}
	if err := os.WriteFile(filepath.Join(w.Path, "big.txt"), []byte(big.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	start := strings.TrimSpace(gitOut(t, repo, "rev-parse", "HEAD"))

	e.command(th, ann, "/diff")
	patch := e.upload(th, "workspace.diff")
	gitOut(t, w.Path, "add", "--all")
	full := gitOut(t, w.Path, "diff", "--cached", "--no-color", start)
	if len(full) <= limit {
		t.Fatalf("the whole diff has %d bytes, not more than the limit", len(full))
	}
	shown := string(patch.Data)
	if len(shown) > limit || len(shown) < limit-100 || !strings.HasSuffix(shown, "\n") || !strings.HasPrefix(full, shown) {
		t.Errorf("diff file of %d bytes (ends %q), want the whole diff's start cut at a line within %d bytes", len(shown), shown[max(0, len(shown)-20):], limit)
	}
	want := sysmsg.Bytes(len(full)-len(shown)) + " of " + sysmsg.Bytes(len(full)) + " left out. To see it all, run `git diff " + start + "` in `" + w.Path + "`"
	e.waitOp(th, "the note of what was left out", hasText(want))
}

// gitOut runs git in dir and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return string(out)
}
