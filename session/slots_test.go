package session

import "testing"

// A slot given back goes to the first thread in line, not to the pool; a
// thread that leaves the line is passed over; once nobody waits, a slot
// given back is free for the next taker at once.
func TestSlotsFirstComeFirstServed(t *testing.T) {
	s := newSlots(1)
	if w, _ := s.take(); w != nil {
		t.Fatal("the first take waited, with a slot free")
	}
	a, aheadA := s.take()
	b, aheadB := s.take()
	c, aheadC := s.take()
	if a == nil || b == nil || c == nil || aheadA != 0 || aheadB != 1 || aheadC != 2 {
		t.Fatalf("with the slot taken: waiters %v %v %v ahead %d %d %d, want three in line 0 1 2", a, b, c, aheadA, aheadB, aheadC)
	}
	if !s.leave(b) {
		t.Fatal("b could not leave the line it was in")
	}
	s.release()
	select {
	case <-a.granted:
	default:
		t.Fatal("the slot given back did not go to the first in line")
	}
	s.release()
	select {
	case <-c.granted:
	default:
		t.Fatal("the slot went past c, who was next once b left")
	}
	if s.leave(c) {
		t.Error("c left the line after its slot was handed over")
	}
	if s.waiting() {
		t.Error("waiting reports a line with nobody in it")
	}
	s.release()
	if w, _ := s.take(); w != nil {
		t.Error("a slot given back with nobody in line was not free")
	}
}
