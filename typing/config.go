package typing

import "time"

// Config is the typing configuration section (YAML key `typing`). Start from
// DefaultConfig.
type Config struct {
	// Mode says when typing starts: "instant" (when a turn starts),
	// "message" (on the turn's first visible output) or "never".
	Mode string `koanf:"mode" validate:"oneof=instant message never"`
	// TTL is a safety limit: typing stops once this long has passed since
	// the turn started, even if the turn did not end. Zero means no limit.
	TTL time.Duration `koanf:"ttl" validate:"min=0"`
}

// Typing modes.
const (
	ModeInstant = "instant"
	ModeMessage = "message"
	ModeNever   = "never"
)

// DefaultConfig returns the documented defaults: instant mode, a 10 minute TTL.
func DefaultConfig() Config {
	return Config{Mode: ModeInstant, TTL: 10 * time.Minute}
}
