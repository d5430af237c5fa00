//go:build !linux

package main

// harden does nothing here: PR_SET_DUMPABLE and /proc are Linux's. (Other
// systems keep a process's environment from other users, not from its
// own.)
func harden() error { return nil }
