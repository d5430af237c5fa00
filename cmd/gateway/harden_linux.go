package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// harden closes the process to the other processes of its user, the
// agents first among them, before anything else runs: it blanks the
// environment block the kernel shows as /proc/PID/environ (the Go
// runtime holds its own copy, so os.Getenv still works) and makes the
// process not dumpable (PR_SET_DUMPABLE 0), which makes /proc/PID/environ,
// mem, maps, fd and the like root's and refuses ptrace to the same uid.
// Agents are not affected: execve makes each program dumpable again.
// Core dumps of the gateway are off as a consequence.
func harden() error {
	var errs []error
	if err := blankEnviron(); err != nil {
		errs = append(errs, fmt.Errorf("blank the environment block: %w", err))
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		errs = append(errs, fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err))
	}
	return errors.Join(errs...)
}

// blankEnviron overwrites the process's original environment strings
// (between env_start and env_end of /proc/self/stat) with zero bytes. It
// must run while the process is still dumpable: afterwards /proc/self/mem
// is root's.
func blankEnviron() error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	start, end, err := envRange(stat)
	if err != nil {
		return err
	}
	if end <= start {
		return nil
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	if _, err := mem.WriteAt(make([]byte, end-start), int64(start)); err != nil {
		return err
	}
	return nil
}

// envRange returns fields 50 and 51 of /proc/PID/stat: where the
// environment strings start and end.
func envRange(stat []byte) (start, end uint64, err error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed /proc/self/stat")
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3
	if len(f) < 49 {
		return 0, 0, errors.New("/proc/self/stat has no env_start and env_end (Linux before 3.5)")
	}
	if start, err = strconv.ParseUint(f[47], 10, 64); err == nil {
		end, err = strconv.ParseUint(f[48], 10, 64)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("malformed /proc/self/stat: %w", err)
	}
	return start, end, nil
}
