package edge

import "github.com/acpgw/gateway/cluster"

// DropReplies makes e lose the answers of its next n operations on their
// way back (the operation is performed and recorded), as a network that
// drops a reply would; dropped is told of each loss.
func (e *Edge) DropReplies(n int, dropped chan<- struct{}) {
	left := make(chan struct{}, n)
	for range n {
		left <- struct{}{}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.drop = func() bool {
		select {
		case <-left:
			dropped <- struct{}{}
			return true
		default:
			return false
		}
	}
}

// OnStored tells f of each inbound event e stores, once it is stored.
func (e *Edge) OnStored(f func(ev cluster.Event)) {
	e.pub.mu.Lock()
	defer e.pub.mu.Unlock()
	e.pub.stored = f
}
