package jsstore

import "time"

// SetPartHook makes f run before each part of a saved record but the
// first; an error f returns stops the save there, as a crash of the
// writer would.
func SetPartHook(s *Store, f func(i int) error) { s.partHook = f }

// SetSeenSkew sets how far a worker's clock may run ahead of the
// server's for SeenSince, until the test ends.
func SetSeenSkew(tb interface{ Cleanup(func()) }, d time.Duration) {
	old := seenSkew
	seenSkew = d
	tb.Cleanup(func() { seenSkew = old })
}
