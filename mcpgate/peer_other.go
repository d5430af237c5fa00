//go:build !linux

package mcpgate

import (
	"errors"
	"net"
)

// peerChecked says that connections are checked against the agent's
// process tree: not here (no SO_PEERCRED and /proc); the token alone is.
const peerChecked = false

var errNoPeer = errors.New("peer credentials are Linux's")

func peerPID(*net.UnixConn) (int, error) { return 0, errNoPeer }
func inTree(int, agentProc) error        { return errNoPeer }
func procStart(pid int) (uint64, error)  { return 0, nil }
