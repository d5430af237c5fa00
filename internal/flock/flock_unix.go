//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package flock

import (
	"errors"
	"os"
	"syscall"
)

// Try takes an exclusive flock on f without waiting. It returns ErrLocked
// while another open file holds it, in any process. The lock goes away
// when f is closed.
func Try(f *os.File) error {
	err := lock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// Wait takes an exclusive flock on f, waiting while another open file
// holds it. The lock goes away when f is closed.
func Wait(f *os.File) error {
	return lock(f, syscall.LOCK_EX)
}

// lock calls flock(2) on f with how, again when a signal interrupted it.
func lock(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lockErr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lockErr = syscall.Flock(int(fd), how)
			if !errors.Is(lockErr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	return lockErr
}
