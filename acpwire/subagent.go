package acpwire

// Subagents (ACP 1.33): subagent_update, which announces or patches a
// child session on its parent's, and session_message(_chunk), a message
// between sessions.

// applySubagent decodes a member of a subagent_update. Each member sets
// all the fields it governs, so a duplicate replaces an earlier one.
func (d *decoder) applySubagent(k ukey, v int) (int, error) {
	s := &d.f.Update.Subagent
	const depth = depthUpdate
	switch k {
	case ukSessionID:
		t, end, err := d.next(v, depth)
		s.ID = d.cachedOr(cacheSession, t)
		return end, err
	case ukTitle, ukDescription:
		t, end, err := d.next(v, depth)
		str, set := d.stringOr(t), t.kind == '"' || t.kind == 'n'
		if k == ukTitle {
			s.Title, s.TitleSet = str, set
		} else {
			s.Description, s.DescriptionSet = str, set
		}
		return end, err
	case ukState:
		s.State, s.StateSet = "", false
		if v < len(d.data) && d.data[v] == '{' {
			s.StateSet = true
			return d.members(v, depth, func(key []byte, t token) {
				if string(key) == "state" {
					s.State = d.wordOr(t)
				}
			})
		}
		t, end, err := d.next(v, depth)
		s.StateSet = t.kind == 'n'
		return end, err
	case ukCapabilities:
		s.Cancel, s.CapsSet = false, false
		if v < len(d.data) && d.data[v] == '{' {
			s.CapsSet = true
			return d.members(v, depth, func(key []byte, t token) {
				if string(key) == "cancel" {
					// An object says the child can be cancelled; null
					// or anything else says it cannot.
					s.Cancel = t.kind == '{'
				}
			})
		}
		t, end, err := d.next(v, depth)
		s.CapsSet = t.kind == 'n'
		return end, err
	}
	return d.skip(v, depth)
}

// applySessionMessage decodes a member of a session_message or
// session_message_chunk: its text content, id and the two sessions.
func (d *decoder) applySessionMessage(k ukey, v int) (int, error) {
	u := &d.f.Update
	const depth = depthUpdate
	switch k {
	case ukContent:
		b, end, err := d.block(v, depth, false)
		u.Text, u.ContentType = b.text, b.typ
		return end, err
	case ukMessageID:
		t, end, err := d.next(v, depth)
		u.MessageID = d.cachedOr(cacheMessage, t)
		return end, err
	case ukSender, ukRecipient:
		t, end, err := d.next(v, depth)
		if k == ukSender {
			u.Sender = d.stringOr(t)
		} else {
			u.Recipient = d.stringOr(t)
		}
		return end, err
	}
	return d.skip(v, depth)
}
