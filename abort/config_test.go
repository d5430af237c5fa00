package abort

import (
	"testing"
	"time"

	"github.com/go-playground/validator/v10"
	"github.com/google/go-cmp/cmp"
)

func TestDefaultConfig(t *testing.T) {
	want := Config{Enabled: true, Grace: 10 * time.Second}
	if diff := cmp.Diff(want, DefaultConfig()); diff != "" {
		t.Errorf("DefaultConfig() mismatch (-want +got):\n%s", diff)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		edit    func(*Config)
		wantTag string // "" means valid
	}{
		{"default", func(*Config) {}, ""},
		{"grace min", func(c *Config) { c.Grace = time.Second }, ""},
		{"grace max", func(c *Config) { c.Grace = 5 * time.Minute }, ""},
		{"grace too short", func(c *Config) { c.Grace = 999 * time.Millisecond }, "min"},
		{"grace zero", func(c *Config) { c.Grace = 0 }, "min"},
		{"grace too long", func(c *Config) { c.Grace = 5*time.Minute + 1 }, "max"},
		{"phrases", func(c *Config) { c.Add = []string{"hold on"}; c.Remove = []string{"exit"} }, ""},
		{"empty added phrase", func(c *Config) { c.Add = []string{""} }, "required"},
		{"empty removed phrase", func(c *Config) { c.Remove = []string{"exit", ""} }, "required"},
	}
	v := validator.New(validator.WithRequiredStructEnabled())
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			err := v.Struct(c)
			var got string
			if ves, ok := err.(validator.ValidationErrors); ok && len(ves) > 0 {
				got = ves[0].Tag()
			} else if err != nil {
				t.Fatalf("Struct(%+v) = %v, want ValidationErrors", c, err)
			}
			if got != tc.wantTag {
				t.Errorf("failed tag = %q, want %q (err %v)", got, tc.wantTag, err)
			}
		})
	}
}
