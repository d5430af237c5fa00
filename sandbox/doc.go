// Package sandbox runs an agent process in a sandbox of its own: on Linux,
// bubblewrap (bwrap) with its own user, mount, PID, IPC, UTS, cgroup and
// network namespaces, no capabilities, a new session, and death with the
// gateway. Elsewhere no sandbox is available (Available says why).
//
// What the agent sees is decided here, from a Spec the configuration
// builds and the session completes:
//
//   - read-only: the system paths programs need (/usr, /bin, /sbin, /lib*,
//     /etc, /opt, /nix, as present; the host's password hashes and SSH host
//     keys masked), the gateway's executable at its own path (the MCP
//     server and the demo agent are that executable), the files the
//     command names (see below) and the operator's ReadOnly paths;
//   - read-write: the thread's workspace, the agent's own home ($HOME),
//     the directories the command names, the operator's ReadWrite paths,
//     the session's MCP socket;
//   - its own /tmp, /dev and /proc (of its own PID namespace: no process
//     of the host, the gateway's least of all);
//   - never: the gateway's data directory, its configuration file and its
//     event log directory (Spec.Hide), masked by an empty directory or
//     file wherever a bound path would show them, and left out of any
//     bind the operator or the command asked for that lies inside them.
//
// The paths a command names are its program (found in the agent's PATH,
// symlinks resolved), the interpreter of a script's "#!" line (and the
// program "#!/usr/bin/env NAME" runs), and every argument that is an
// absolute path of something that exists. Each is bound at its resolved
// path (a symlink at the named path when that differs): a file read-only,
// a directory read-write (a state directory, as the demo agent's
// --state-dir); a file inside a node_modules directory brings the whole
// project, read-only: the directory holding the outermost node_modules.
//
// The network namespace has only its own loopback: an agent whose policy
// is "none" reaches nothing at all, not even the host's loopback services
// (the web chat, metrics, NATS).
package sandbox
