// Package browsertest starts the Chromium that tests drive the web chat
// with (chromedp), the same way for every package that has such tests.
package browsertest

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Start starts Chromium at path with a window of width×height and
// returns the context of its first tab, for the test's whole life.
// Chromium now and then exits at once under load, before it says where
// its DevTools listen ("chrome failed to start"): a browser that never
// started is started again, up to three times; any other error fails
// the test.
func Start(t testing.TB, path string, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // tests often run as root in containers
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(width, height),
	)
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
		// The first call starts the browser for the context's whole life,
		// so it runs without a timeout; later steps have their own.
		if err = chromedp.Do(ctx); err == nil {
			t.Cleanup(func() {
				cancel()
				cancelAlloc()
			})
			return ctx
		}
		cancel()
		cancelAlloc()
		if !strings.Contains(err.Error(), "chrome failed to start") {
			break
		}
		t.Logf("starting Chromium, attempt %d: %v", attempt, err)
	}
	t.Fatalf("starting Chromium: %v", err)
	return nil
}
