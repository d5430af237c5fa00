package edge

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
