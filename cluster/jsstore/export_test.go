package jsstore

// SetPartHook makes f run before each part of a saved record but the
// first; an error f returns stops the save there, as a crash of the
// writer would.
func SetPartHook(s *Store, f func(i int) error) { s.partHook = f }
