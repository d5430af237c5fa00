package agent

// RegistryAdd records pid as an agent's process group (for tests).
func RegistryAdd(r *Registry, pid int) { r.add(pid) }
