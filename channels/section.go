package channels

// SectionInfo is what package config needs to know of a platform's
// section beyond its typed settings: the words the platform's overrides
// and access rules use, and how its secrets look. An adapter package
// returns it from its config section's Info method; config composes the
// sections without naming a platform.
type SectionInfo struct {
	// Space is one server of the platform as people call it ("guild"),
	// "" when the platform has none; Spaces is the key of its overrides
	// and access rules ("guilds").
	Space, Spaces string
	// Groups is the key of the access rules' groups of people ("roles"),
	// "" when the platform has none.
	Groups string
	// ChannelOverrides says that settings can be overridden per channel
	// (overrides.<platform>.channels).
	ChannelOverrides bool
	// Enable says what turns the platform on, for the error when no
	// platform is on ("channels.<platform>.token"); for a Fallback
	// platform, the key that turned it off.
	Enable string
	// Fallback marks a platform that needs no setup (a local chat): its
	// section's On is given whether any other platform is on, and it can
	// be on exactly when none is.
	Fallback bool
	// SecretEnv are environment variables that normally hold the
	// platform's secrets ("*" matches any part): no agent inherits them.
	SecretEnv []string
	// SecretPrefixes start secrets and say what kind they are (a token
	// type); a masked secret keeps its prefix.
	SecretPrefixes []string
}

// ConfigError is a problem with one key of an adapter's config section.
type ConfigError struct {
	// Key is the YAML key, in dot notation from the top of the file
	// (channels.web.listen).
	Key string
	// Msg says what is wrong, with the allowed values.
	Msg string
}

func (e *ConfigError) Error() string { return e.Key + ": " + e.Msg }
