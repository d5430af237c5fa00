// Package workspace gives each chat thread its own working directory, as an
// agent's settings ask (agents.list.NAME.workspace):
//
//   - shared: the agent's cwd, for every thread (the default).
//   - dir: a directory per thread, under dataDir/workspaces or a template,
//     made at first use (0700) and kept across restarts.
//   - worktree: a git worktree of the repository at the agent's cwd, on a
//     branch of its own per thread (acp/NAME), so threads never share a
//     checkout.
//
// A Manager makes (Open), describes (Info, Diff) and removes (Remove,
// Sweep) them. It records what it made in dataDir/workspaces/index.json, so
// a restarted gateway finds each thread's workspace again. Bad states (git
// missing, a cwd that is not a repository, a dirty worktree at removal) are
// errors a thread can be shown, matched with errors.Is against the Err
// values; nothing here panics on them.
package workspace
