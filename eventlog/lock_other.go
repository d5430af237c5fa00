//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package eventlog

import (
	"errors"
	"fmt"
	"os"
)

// lockFile fails: this platform has no flock, and a log without its
// single-writer lock could interleave two writers' frames.
func lockFile(*os.File) error {
	return fmt.Errorf("flock: %w", errors.ErrUnsupported)
}
