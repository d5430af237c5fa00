package mcpgate

import (
	"os"
	"strconv"
	"testing"
)

// FuzzParseStat: /proc/PID/stat parsing never panics, and reads this
// process's parent as the kernel reports it.
func FuzzParseStat(f *testing.F) {
	self, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		f.Fatal(err)
	}
	ppid, _, err := parseStat(self)
	if err != nil || ppid != os.Getppid() {
		f.Fatalf("parseStat(/proc/self/stat) = ppid %d, %v; want %d", ppid, err, os.Getppid())
	}
	f.Add(self)
	f.Add([]byte("1 (a) b) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 " + strconv.Itoa(5) + " 0"))
	f.Add([]byte("12 (x"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseStat(data)
	})
}
