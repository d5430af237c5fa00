// Package eventlog keeps the raw ACP event log: every JSON-RPC frame the
// gateway exchanges with an agent, both directions, appended unchanged and in
// wire order to one NDJSON file per ACP session, one frame per line. (The
// one change is made before the frames get here: the MCP token of
// session/new and session/load reads agent.Redacted.)
// `gateway replay` reads these files back.
//
// # Files
//
// A session's files live in one directory and share a name derived from the
// session id (see PathFor): bytes in [A-Za-z0-9_-] are kept, every other byte
// is written as %XX (upper-case hex), so the mapping can be reversed. The dot
// is escaped too: a name never contains '.', so it can never be "." or "..",
// never hides the file, and never looks like another session's rotated
// segment. An id whose escaped form would exceed 160 bytes is named by a
// readable prefix, '~' and the hex SHA-256 of the whole id; the empty id is
// named "~empty". '~' never appears in an escaped name, so different ids get
// different names.
//
// For a session named N:
//
//	N.ndjson      the current segment, the one being appended to
//	N.1.ndjson    the newest older segment
//	N.2.ndjson    ...
//	N.K.ndjson    the oldest kept segment, K = MaxSegments-1
//	N.lock        the single-writer lock (flock); it stays on disk
//
// Before a frame would push a non-empty current segment past
// MaxSegmentBytes, the segments shift up by one (N.ndjson becomes N.1.ndjson),
// the oldest beyond MaxSegments is deleted, and a new current segment starts.
// A frame larger than MaxSegmentBytes is still written, alone in its segment.
//
// # Crashes
//
// A crash in the middle of a write can leave a torn last line: bytes after
// the last newline. Readers drop it, and the next Open of the session cuts
// it off before appending, so a torn frame never glues onto a later one.
//
// Directories are created with mode 0700 and files with 0600: the log holds
// prompts, code and tool output.
package eventlog
