package mcpgate

import (
	"context"
	"strings"
	"sync"
)

// FakeThread records the calls the tools make.
type FakeThread struct {
	mu       sync.Mutex // guards the fields below
	Files    []File
	Messages []string
	Reads    []int
	History  []Message // what ReadThread returns
	Asked    []string  // the questions asked, with their options after " | "
	Answer   Answer    // what Ask answers
	// Hold, if set, keeps each SendFile waiting until it is closed;
	// Held gets each file then.
	Hold chan struct{}
	Held chan File
}

var _ Thread = (*FakeThread)(nil)

func (f *FakeThread) SendFile(ctx context.Context, file File) (bool, error) {
	f.mu.Lock()
	f.Files = append(f.Files, file)
	hold := f.Hold
	f.mu.Unlock()
	if hold != nil {
		// A thread whose lane is slow: the file waits, its bytes held.
		f.Held <- file
		select {
		case <-hold:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	file.Release()
	return false, nil
}

func (f *FakeThread) SendMessage(_ context.Context, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Messages = append(f.Messages, text)
	return nil
}

func (f *FakeThread) ReadThread(_ context.Context, limit int) ([]Message, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Reads = append(f.Reads, limit)
	return f.History, nil
}

func (f *FakeThread) Ask(_ context.Context, question string, options []string) (Answer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Asked = append(f.Asked, question+" | "+strings.Join(options, ","))
	return f.Answer, nil
}

// SetAnswer sets what Ask answers.
func (f *FakeThread) SetAnswer(a Answer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Answer = a
}

// Questions returns the questions asked.
func (f *FakeThread) Questions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.Asked...)
}

// Calls returns copies of what was recorded.
func (f *FakeThread) Calls() (files []File, msgs []string, reads []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]File(nil), f.Files...), append([]string(nil), f.Messages...), append([]int(nil), f.Reads...)
}
