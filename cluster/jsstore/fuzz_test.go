package jsstore

import (
	"strconv"
	"testing"
)

// FuzzParsePart feeds arbitrary Gateway-Part headers (read back from the
// stream) to parsePart: no panic, and what it accepts is a part of a
// record in several parts that prints back as read.
func FuzzParsePart(f *testing.F) {
	for _, s := range []string{"1/2", "3/3", "0/2", "2/1", "1/1", "-1/2", "a/b", "1/", "/", "", "1/2/3", "99999999999999999999/2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		i, n, err := parsePart(h)
		if err != nil {
			return
		}
		if i < 1 || n < 2 || i > n {
			t.Fatalf("parsePart(%q) = %d/%d", h, i, n)
		}
		if back := strconv.Itoa(i) + "/" + strconv.Itoa(n); back != h && len(back) >= len(h) {
			t.Fatalf("parsePart(%q) = %s", h, back)
		}
	})
}
