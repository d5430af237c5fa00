// Package flock takes advisory, exclusive file locks that other processes
// see: the event log's single-writer lock and the data directory's
// one-gateway lock.
package flock

import "errors"

// ErrLocked means another open file, in this process or another, holds
// the lock.
var ErrLocked = errors.New("locked by another holder")
