//go:build !linux

package sandbox

import (
	"fmt"
	"runtime"
)

// Available reports that no sandbox is available: bubblewrap needs Linux
// namespaces.
func Available() (string, error) {
	return "", fmt.Errorf("sandbox: not available on %s (bubblewrap needs Linux namespaces)", runtime.GOOS)
}
