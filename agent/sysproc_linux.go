package agent

import "syscall"

// sysProcAttr puts the agent in its own process group (so that stopping
// it stops its children) and has the kernel kill it when the gateway
// dies, however it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
