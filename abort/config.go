package abort

import "time"

// Config is the stop-word configuration section (YAML key `abort`). Start
// from DefaultConfig.
type Config struct {
	// Enabled turns stop-word detection on (default true). When false, no
	// message is a stop and stop words reach the agent as prompts.
	Enabled bool `koanf:"enabled"`
	// Add lists extra stop phrases. They are normalised like messages (see
	// Normalize), so case, quotes and trailing punctuation do not matter.
	Add []string `koanf:"add" validate:"dive,required"`
	// Remove lists phrases, built-in or added, that are not stops (for
	// example "exit" or "para" where people use them otherwise). They are
	// normalised like messages; a phrase that is not in the list is ignored.
	Remove []string `koanf:"remove" validate:"dive,required"`
	// Grace is how long the gateway waits for the agent to end a cancelled
	// turn before it kills and restarts the agent (default 10s, range
	// 1s–5m).
	Grace time.Duration `koanf:"grace" validate:"min=1s,max=5m"`
}

// DefaultConfig returns the documented defaults: detection enabled, no
// added or removed phrases, a 10 second grace.
func DefaultConfig() Config {
	return Config{Enabled: true, Grace: 10 * time.Second}
}
