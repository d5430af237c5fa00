package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// probe is bwrap's path, or why it cannot be used, found once.
var probe = sync.OnceValues(func() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", fmt.Errorf("sandbox: bubblewrap (bwrap) is not installed (Debian and Ubuntu: apt-get install bubblewrap)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// What every sandbox does, on the whole host read-only.
	cmd := exec.CommandContext(ctx, path, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "true")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		why := strings.TrimSpace(out.String())
		if why == "" {
			why = err.Error()
		}
		return "", fmt.Errorf("sandbox: %s does not work on this machine: %s (user namespaces may be off: sysctl kernel.unprivileged_userns_clone; in a container, run it with --security-opt seccomp=unconfined --security-opt apparmor=unconfined --security-opt systempaths=unconfined)", path, why)
	}
	return path, nil
})

// Available returns the path of bwrap when it works on this machine (it
// was run once, in the namespaces every sandbox uses), or an error saying
// why not. The answer is found once and kept.
func Available() (string, error) { return probe() }
