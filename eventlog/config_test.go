package eventlog

import (
	"testing"

	"github.com/go-playground/validator/v10"
)

func TestConfigValidation(t *testing.T) {
	v := validator.New(validator.WithRequiredStructEnabled())
	tests := []struct {
		name    string
		edit    func(*Config)
		wantErr bool
	}{
		{"defaults", func(*Config) {}, false},
		{"smallest", func(c *Config) { c.MaxSegmentBytes, c.MaxSegments = 1<<20, 1 }, false},
		{"largest", func(c *Config) { c.MaxSegmentBytes, c.MaxSegments = 4<<30, 1000 }, false},
		{"dir", func(c *Config) { c.Dir = "/var/lib/gateway/events" }, false},
		{"segment too small", func(c *Config) { c.MaxSegmentBytes = 1<<20 - 1 }, true},
		{"segment too large", func(c *Config) { c.MaxSegmentBytes = 4<<30 + 1 }, true},
		{"no segments", func(c *Config) { c.MaxSegments = 0 }, true},
		{"too many segments", func(c *Config) { c.MaxSegments = 1001 }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := v.Struct(c)
			if gotErr := err != nil; gotErr != tc.wantErr {
				t.Errorf("validate %+v: got %v, want error %v", c, err, tc.wantErr)
			}
		})
	}
}

func TestDefaultConfig(t *testing.T) {
	c := DefaultConfig()
	if c.Dir != "" || c.MaxSegmentBytes != 64<<20 || c.MaxSegments != 5 {
		t.Errorf("DefaultConfig() = %+v, want Dir \"\", 64 MiB, 5 segments", c)
	}
}
