//go:build !linux

package agent

import "syscall"

// sysProcAttr puts the agent in its own process group, so that stopping
// it stops its children. (Only Linux has a parent-death signal.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
