package mcpgate

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// peerChecked says that connections are checked against the agent's
// process tree here.
const peerChecked = true

// maxDepth bounds the walk up the parents of a peer: an agent's tools
// run a few levels below it (npx, node, the MCP server).
const maxDepth = 64

// peerPID returns the pid of the process that connected c, in the
// gateway's pid namespace.
func peerPID(c *net.UnixConn) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if credErr != nil {
		return 0, fmt.Errorf("SO_PEERCRED: %w", credErr)
	}
	return int(cred.Pid), nil
}

// inTree returns nil when pid is the agent process or a descendant of it.
func inTree(pid int, agent agentProc) error {
	for range maxDepth {
		ppid, start, err := procStat(pid)
		if err != nil {
			return err
		}
		if pid == agent.pid {
			if start != agent.start {
				return errors.New("the agent process has ended (its pid is another process's)")
			}
			return nil
		}
		if ppid <= 1 {
			return errors.New("not in the agent's process tree")
		}
		pid = ppid
	}
	return errors.New("not in the agent's process tree (too deep)")
}

// procStart returns the start time of process pid.
func procStart(pid int) (uint64, error) {
	_, start, err := procStat(pid)
	return start, err
}

// procStat returns the parent and the start time (fields 4 and 22) of
// /proc/PID/stat.
func procStat(pid int) (ppid int, start uint64, err error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseStat(data)
}

func parseStat(data []byte) (ppid int, start uint64, err error) {
	// The command (field 2) is in parentheses and may hold anything.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc/PID/stat")
	}
	f := strings.Fields(string(data[i+1:])) // f[0] is field 3
	if len(f) < 20 {
		return 0, 0, errors.New("malformed /proc/PID/stat: too few fields")
	}
	if ppid, err = strconv.Atoi(f[1]); err == nil {
		start, err = strconv.ParseUint(f[19], 10, 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("malformed /proc/PID/stat: %w", err)
	}
	return ppid, start, nil
}
