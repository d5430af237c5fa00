package dispatch

import "time"

// Config is the delivery section: how long undelivered output is kept
// while a chat platform cannot be reached.
type Config struct {
	// RetryFor is how long a message that cannot be delivered because
	// the platform is unreachable (refused connections, timeouts, 5xx
	// answers) is tried again, with a backoff from 1s doubling to 30s,
	// before the thread's undelivered output is given up; the thread is
	// then told how much was lost once the platform is back. A mention
	// waiting for its thread keeps trying as long. 1m to 24h
	// (default 15m).
	RetryFor time.Duration `koanf:"retryFor" validate:"min=1m,max=24h"`
}

// DefaultRetryFor is Config.RetryFor's default.
const DefaultRetryFor = 15 * time.Minute

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config { return Config{RetryFor: DefaultRetryFor} }

// Backoff of retries while the platform is unreachable.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
)
