package mcpgate

import (
	"errors"
	"net"
	"sync/atomic"
)

// agentProc is the agent process whose tree may call: its pid and its
// start time (clock ticks after boot), so that a reused pid is not taken
// for it.
type agentProc struct {
	pid   int
	start uint64
}

// errNoAgent refuses every connection before SetAgent.
var errNoAgent = errors.New("no agent process is set")

// SetAgent tells the server the agent process its session serves (the
// pid agent.Process.Pid reports: under a sandbox, the sandbox's outer
// process). From then on the socket answers only a connection from that
// process or one of its descendants, as the kernel reports the peer
// (SO_PEERCRED) and /proc tells its parents; a connection from anyone
// else gets nothing, however good its token. Before SetAgent every
// connection is refused. A thread's next agent process calls it again.
// Where there is no SO_PEERCRED and /proc (other than Linux), the token
// alone is checked. It reads /proc/PID/stat.
func (s *Server) SetAgent(pid int) {
	start, err := procStart(pid)
	if err != nil {
		s.log.Warn("mcp socket: the agent process cannot be found; every connection is refused", "pid", pid, "err", err)
		s.agent.Store(nil)
		return
	}
	s.agent.Store(&agentProc{pid: pid, start: start})
}

// agentRef holds the agent process set by SetAgent.
type agentRef = atomic.Pointer[agentProc]

// checkPeer returns the peer's pid and nil when the peer of c is the
// agent process or one of its descendants.
func (s *Server) checkPeer(c *net.UnixConn) (int, error) {
	if !peerChecked {
		return 0, nil
	}
	pid, err := peerPID(c)
	if err != nil {
		return 0, err
	}
	a := s.agent.Load()
	if a == nil {
		return pid, errNoAgent
	}
	return pid, inTree(pid, *a)
}
