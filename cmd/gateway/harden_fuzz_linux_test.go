package main

import (
	"os"
	"testing"
)

// FuzzEnvRange: reading env_start and env_end never panics, and finds
// them in this process's /proc/self/stat.
func FuzzEnvRange(f *testing.F) {
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		f.Fatal(err)
	}
	if start, end, err := envRange(self); err != nil || start == 0 || end <= start {
		f.Fatalf("envRange(/proc/self/stat) = %d, %d, %v", start, end, err)
	}
	f.Add(self)
	f.Add([]byte("1 (a) b) S"))
	f.Fuzz(func(t *testing.T, data []byte) {
		envRange(data)
	})
}
