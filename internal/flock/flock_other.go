//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package flock

import (
	"errors"
	"fmt"
	"os"
)

// Try fails: this platform has no flock.
func Try(*os.File) error {
	return fmt.Errorf("flock: %w", errors.ErrUnsupported)
}

// Wait fails: this platform has no flock.
func Wait(*os.File) error {
	return fmt.Errorf("flock: %w", errors.ErrUnsupported)
}
