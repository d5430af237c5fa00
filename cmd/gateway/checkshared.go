package main

import (
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/acpgw/gateway/config"
	"github.com/acpgw/gateway/workspace"
)

// warnShared writes a warning for each agent in the shared workspace mode
// whose directory is / or the gateway's home (workspace.CheckShared):
// its threads would not start.
func warnShared(cfg config.Config, w io.Writer) {
	for _, name := range slices.Sorted(maps.Keys(cfg.Agents.List)) {
		a := cfg.Agents.List[name]
		if a.Workspace != "" && a.Workspace != string(workspace.Shared) {
			continue
		}
		dir := a.Cwd
		if dir == "" {
			dir = "." // the gateway's working directory
		}
		if err := workspace.CheckShared(dir); err != nil {
			fmt.Fprintf(w, "gateway check: warning: agents.list.%s: its threads will not start: %v\n", name, err)
		}
	}
}
