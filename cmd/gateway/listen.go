package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"syscall"

	"github.com/acpgw/gateway/config"
)

// listen binds the address of the setting key (such as
// channels.web.listen) before anything starts, so that a busy port fails
// or moves while there is nothing to shut down yet.
//
// An address the operator set (in the file, the environment or --set)
// that is in use fails, naming key. A default address that is in use
// moves to a free port on the same host, with a warning: the default run
// must not fail because something else took the port. When optional is
// set (metrics), a default address that cannot be bound at all is
// skipped with a warning and listen returns nil, nil.
func listen(cfg config.Config, key, addr string, optional bool, log *slog.Logger) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	src := cfg.Source(key)
	if src != "default" || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("%s: cannot listen on %s (set %s): %w; set %s to a free host:port", key, addr, describeSource(cfg, src), bareNetError(err), key)
	}
	host, _, _ := net.SplitHostPort(addr)
	free := net.JoinHostPort(host, "0")
	ln, err2 := net.Listen("tcp", free)
	if err2 != nil {
		if optional {
			log.Warn("the default address is in use and no other port is free; serving without it", "key", key, "addr", addr, "err", bareNetError(err2))
			return nil, nil
		}
		return nil, fmt.Errorf("%s: the default %s is in use and no other port is free: %w; set %s to a free host:port", key, addr, bareNetError(err2), key)
	}
	log.Warn("the default address is in use; listening on a free port instead (set "+key+" to choose one)", "key", key, "busy", addr, "addr", ln.Addr().String())
	return ln, nil
}

// bareNetError drops the "listen tcp ADDR:" context of a *net.OpError, which
// the messages above already give.
func bareNetError(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}

// describeSource says where a setting came from, for an error message.
func describeSource(cfg config.Config, src string) string {
	switch {
	case src == "file":
		return "in " + cfg.File()
	case src == "default":
		return "by default"
	default:
		return "by " + src // "env NAME", "--set"
	}
}
