package channels

import "testing"

func TestHealth(t *testing.T) {
	var h Health
	if err := h.Check(); err == nil || err.Error() != "not running" {
		t.Errorf("zero Health = %v, want not running", err)
	}
	h.Set(true, "")
	if err := h.Check(); err != nil {
		t.Errorf("up = %v", err)
	}
	h.Set(false, "reconnecting")
	if err := h.Check(); err == nil || err.Error() != "reconnecting" {
		t.Errorf("down = %v, want reconnecting", err)
	}
}
