package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Registry records the process groups of the running agents in a file, so
// that a gateway started after a crash can stop the groups the crashed one
// left behind (an agent's children outlive it: the parent-death signal
// reaches the agent only). Each line is "PGID START SID BOOT": the group
// (the agent's pid), the agent's start time and session from
// /proc/PID/stat, and the boot id, which together tell our agent from a
// process that got the same pid later. Its methods are safe for
// concurrent use; a nil *Registry records nothing.
type Registry struct {
	path string
	log  *slog.Logger

	mu    sync.Mutex // guards procs and the file
	procs map[int]procRecord
}

// procRecord is one agent process group as recorded.
type procRecord struct {
	pgid  int
	start uint64 // clock ticks after boot, field 22 of /proc/PID/stat
	sid   int
	boot  string
}

// OpenRegistry stops the agent process groups recorded in the file at
// path by an earlier gateway that are still alive and still ours, then
// starts an empty record there (mode 0600). Call it once at start, with
// the data directory locked, before any agent starts: a group recorded
// there belongs to no running gateway. A record that cannot be read is
// logged and dropped. Off Linux it returns a nil *Registry, which records
// nothing.
func OpenRegistry(path string, log *slog.Logger) (*Registry, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Registry{path: path, log: log, procs: map[int]procRecord{}}
	if runtime.GOOS != "linux" {
		// No /proc to tell our processes from others by.
		log.Info("agents left behind by a crash of the gateway are not stopped at start on " + runtime.GOOS)
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("agent registry: %w", err)
	}
	boot := bootID()
	for _, rec := range parseRecords(data, log) {
		if rec.boot != boot {
			continue // from before a reboot: nothing of it runs
		}
		killed, err := killLeftover(rec)
		switch {
		case err != nil:
			log.Warn("cannot stop an agent left behind by an earlier gateway", "pgid", rec.pgid, "err", err)
		case killed > 0:
			log.Warn("stopped an agent process group left behind by an earlier gateway", "pgid", rec.pgid, "processes", killed)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.saveLocked(); err != nil {
		return nil, err
	}
	return r, nil
}

func parseRecords(data []byte, log *slog.Logger) []procRecord {
	var out []procRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var rec procRecord
		var err error
		if len(f) != 4 {
			err = errors.New("want 4 fields")
		}
		if err == nil {
			rec.pgid, err = strconv.Atoi(f[0])
		}
		if err == nil {
			rec.start, err = strconv.ParseUint(f[1], 10, 64)
		}
		if err == nil {
			rec.sid, err = strconv.Atoi(f[2])
		}
		if err == nil && rec.pgid <= 1 {
			err = errors.New("not a process group")
		}
		if err != nil {
			log.Warn("ignoring a bad line of the agent registry", "line", sc.Text(), "err", err)
			continue
		}
		rec.boot = f[3]
		out = append(out, rec)
	}
	return out
}

// killLeftover kills the recorded group if it is still ours, and returns
// how many processes it had. It is ours when its leader (pid = pgid) is
// the recorded process (same start time), or, the leader gone, when every
// member is in the recorded session and started after the leader (a
// group with a new leader of that pid is someone else's).
func killLeftover(rec procRecord) (int, error) {
	procs, err := listProcs()
	if err != nil {
		return 0, err
	}
	var members []procStat
	for _, p := range procs {
		if p.pid == rec.pgid && p.start != rec.start {
			return 0, nil // the pid was reused: not ours
		}
		if p.pgrp == rec.pgid {
			members = append(members, p)
		}
	}
	for _, m := range members {
		if m.sid != rec.sid || m.start < rec.start {
			return 0, nil
		}
	}
	if len(members) == 0 {
		return 0, nil
	}
	if err := syscall.Kill(-rec.pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return 0, fmt.Errorf("kill process group %d: %w", rec.pgid, err)
	}
	return len(members), nil
}

// add records the process group of the agent pid (its own group).
func (r *Registry) add(pid int) {
	if r == nil {
		return
	}
	st, err := readProcStat(pid)
	if err != nil {
		r.log.Warn("cannot record the agent process; a crash would leave it behind", "pid", pid, "err", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.procs[pid] = procRecord{pgid: pid, start: st.start, sid: st.sid, boot: bootID()}
	if err := r.saveLocked(); err != nil {
		r.log.Warn("cannot record the agent process; a crash would leave it behind", "pid", pid, "err", err)
	}
}

// remove forgets the process group of the agent pid (it has been reaped
// and its group killed).
func (r *Registry) remove(pid int) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.procs[pid]; !ok {
		return
	}
	delete(r.procs, pid)
	if err := r.saveLocked(); err != nil {
		r.log.Warn("cannot update the agent registry", "err", err)
	}
}

// saveLocked writes the records to a new file and renames it over the old
// one, so that a crash leaves one or the other whole.
func (r *Registry) saveLocked() error {
	var b strings.Builder
	for _, pid := range slices.Sorted(maps.Keys(r.procs)) {
		rec := r.procs[pid]
		fmt.Fprintf(&b, "%d %d %d %s\n", rec.pgid, rec.start, rec.sid, rec.boot)
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("agent registry: %w", err)
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return fmt.Errorf("agent registry: %w", err)
	}
	return nil
}

// procStat is what the registry needs of /proc/PID/stat.
type procStat struct {
	pid, pgrp, sid int
	start          uint64
}

// parseProcStat parses the contents of /proc/PID/stat.
func parseProcStat(data []byte) (procStat, error) {
	// The command (field 2) is in parentheses and may hold anything.
	i := bytes.LastIndexByte(data, ')')
	j := bytes.IndexByte(data, ' ')
	if i < 0 || j < 0 || j > i {
		return procStat{}, errors.New("malformed stat")
	}
	var st procStat
	var err error
	if st.pid, err = strconv.Atoi(string(data[:j])); err != nil {
		return procStat{}, fmt.Errorf("malformed stat: %w", err)
	}
	// rest[0] is field 3 (state).
	rest := strings.Fields(string(data[i+1:]))
	if len(rest) < 20 {
		return procStat{}, errors.New("malformed stat: too few fields")
	}
	if st.pgrp, err = strconv.Atoi(rest[2]); err == nil {
		if st.sid, err = strconv.Atoi(rest[3]); err == nil {
			st.start, err = strconv.ParseUint(rest[19], 10, 64)
		}
	}
	if err != nil {
		return procStat{}, fmt.Errorf("malformed stat: %w", err)
	}
	return st, nil
}

// procDir is where the process table is (Linux's procfs).
const procDir = "/proc"

func readProcStat(pid int) (procStat, error) {
	data, err := os.ReadFile(filepath.Join(procDir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(data)
}

// listProcs reads the stat of every process.
func listProcs() ([]procStat, error) {
	ents, err := os.ReadDir(procDir)
	if err != nil {
		return nil, err
	}
	var out []procStat
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readProcStat(pid)
		if err != nil {
			continue // exited meanwhile
		}
		out = append(out, st)
	}
	return out, nil
}

// bootID identifies this boot of the machine ("-" if unknown).
func bootID() string {
	b, err := os.ReadFile(filepath.Join(procDir, "sys", "kernel", "random", "boot_id"))
	if err != nil {
		return "-"
	}
	return strings.TrimSpace(string(b))
}
