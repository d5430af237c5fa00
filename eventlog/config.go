package eventlog

// Config is the event log's configuration section.
// Start from DefaultConfig.
type Config struct {
	// Dir is the directory holding the session logs. Empty means the
	// gateway's data directory plus "/events"; the caller resolves it and
	// passes the result to Open.
	Dir string `koanf:"dir"`
	// MaxSegmentBytes is the size at which a session's current segment is
	// rotated, in bytes: from 1 MiB to 4 GiB. A single larger frame is still
	// written, alone in its segment.
	MaxSegmentBytes int64 `koanf:"maxSegmentBytes" validate:"min=1048576,max=4294967296"`
	// MaxSegments is how many segment files a session keeps, counting the
	// current one: from 1 to 1000. The oldest beyond it is deleted.
	MaxSegments int `koanf:"maxSegments" validate:"min=1,max=1000"`
}

// Defaults for Config.
const (
	DefaultMaxSegmentBytes = 64 << 20
	DefaultMaxSegments     = 5
)

// DefaultConfig returns the documented defaults: the data directory's
// "events" folder, 64 MiB segments, 5 segments per session.
func DefaultConfig() Config {
	return Config{MaxSegmentBytes: DefaultMaxSegmentBytes, MaxSegments: DefaultMaxSegments}
}
