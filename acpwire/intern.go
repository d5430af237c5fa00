package acpwire

// method returns the method name of the string token t.
func (d *decoder) method(t token) string {
	b := d.bytes(t.raw, t.fl)
	if s, ok := knownMethod(b); ok {
		return s
	}
	return string(b)
}

// knownMethod returns the interned name of a known ACP method.
func knownMethod(b []byte) (string, bool) {
	switch string(b) {
	case "session/update":
		return "session/update", true
	case "session/prompt":
		return "session/prompt", true
	case "session/cancel":
		return "session/cancel", true
	case "session/request_permission":
		return "session/request_permission", true
	case "session/new":
		return "session/new", true
	case "session/load":
		return "session/load", true
	case "session/list":
		return "session/list", true
	case "session/set_mode":
		return "session/set_mode", true
	case "session/set_model":
		return "session/set_model", true
	case "session/set_config_option":
		return "session/set_config_option", true
	case "initialize":
		return "initialize", true
	case "authenticate":
		return "authenticate", true
	case "fs/read_text_file":
		return "fs/read_text_file", true
	case "fs/write_text_file":
		return "fs/write_text_file", true
	case "terminal/create":
		return "terminal/create", true
	case "terminal/output":
		return "terminal/output", true
	case "terminal/release":
		return "terminal/release", true
	case "terminal/wait_for_exit":
		return "terminal/wait_for_exit", true
	case "terminal/kill":
		return "terminal/kill", true
	}
	return "", false
}

// stringOr returns the string token t as a new string, "" for other kinds.
func (d *decoder) stringOr(t token) string {
	if t.kind != '"' {
		return ""
	}
	return d.str(t.raw, t.fl)
}

// wordOr is stringOr with interning of the common ACP enum values.
func (d *decoder) wordOr(t token) string {
	if t.kind != '"' {
		return ""
	}
	return d.word(t)
}

// cached returns the string token t, reusing the string kept in cache slot
// when it is the same.
func (d *decoder) cached(slot int, t token) string {
	b := d.bytes(t.raw, t.fl)
	if c := d.f.cache[slot]; string(b) == c {
		return c
	}
	s := string(b)
	d.f.cache[slot] = s
	return s
}

// cachedOr is cached for a string token and "" for any other.
func (d *decoder) cachedOr(slot int, t token) string {
	if t.kind != '"' {
		return ""
	}
	return d.cached(slot, t)
}

// word returns the string token t, interning common ACP enum values.
func (d *decoder) word(t token) string {
	b := d.bytes(t.raw, t.fl)
	switch string(b) {
	case "text":
		return "text"
	case "image":
		return "image"
	case "audio":
		return "audio"
	case "resource":
		return "resource"
	case "resource_link":
		return "resource_link"
	case "content":
		return "content"
	case "diff":
		return "diff"
	case "terminal":
		return "terminal"
	case "read":
		return "read"
	case "edit":
		return "edit"
	case "delete":
		return "delete"
	case "move":
		return "move"
	case "search":
		return "search"
	case "execute":
		return "execute"
	case "think":
		return "think"
	case "fetch":
		return "fetch"
	case "switch_mode":
		return "switch_mode"
	case "other":
		return "other"
	case "high":
		return "high"
	case "medium":
		return "medium"
	case "low":
		return "low"
	case "pending":
		return "pending"
	case "in_progress":
		return "in_progress"
	case "completed":
		return "completed"
	case "failed":
		return "failed"
	case "end_turn":
		return "end_turn"
	case "max_tokens":
		return "max_tokens"
	case "max_turn_requests":
		return "max_turn_requests"
	case "refusal":
		return "refusal"
	case "cancelled":
		return "cancelled"
	case "USD":
		return "USD"
	}
	return string(b)
}
