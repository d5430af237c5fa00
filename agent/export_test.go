package agent

// RegistryAdd records pid as an agent's process group (for tests).
func RegistryAdd(r *Registry, pid int) { r.add(pid) }

// SetPromptWaitsHook sets f to be called when a prompt waits for the last
// steps of the one before it, until the test ends.
func SetPromptWaitsHook(t interface{ Cleanup(func()) }, f func()) {
	testHookPromptWaits = f
	t.Cleanup(func() { testHookPromptWaits = nil })
}
