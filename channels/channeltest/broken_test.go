package channeltest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/acpgw/gateway/channels"
)

// The tests in this file check that RunContract fails for adapters that
// break the contract. RunContract reports through *testing.T, so each broken
// adapter runs in a child process of the test binary (TestBrokenAdapterChild)
// and the parent checks its exit status and output.

const brokenEnv = "CHANNELTEST_BROKEN"

// brokenAdapters are adapters that each break one rule of the contract,
// with a line the suite's failure output must contain.
var brokenAdapters = []struct {
	name    string
	harness func(t *testing.T) Harness
	want    string
}{
	{
		name: "hollow editor",
		harness: broken(Options{}, func(a channels.Adapter) channels.Adapter {
			return hollowEditor{a}
		}),
		want: "adapter claims Editor, but the call fails",
	},
	{
		name: "run returns canceled",
		harness: broken(Options{}, func(a channels.Adapter) channels.Adapter {
			return canceledRun{a}
		}),
		want: "want nil",
	},
	{
		name: "run leaks a goroutine",
		harness: broken(Options{}, func(a channels.Adapter) channels.Adapter {
			return leakyRun{a}
		}),
		want: "still running after Run returned",
	},
	{
		name: "stopper without typer",
		harness: broken(Options{}, func(a channels.Adapter) channels.Adapter {
			return stopperOnly{a}
		}),
		want: "TypingStopper but not a Typer",
	},
	{
		name: "limit counted in UTF-16 units",
		harness: broken(Options{Limits: channels.Limits{MaxMessageChars: 2000}}, func(a channels.Adapter) channels.Adapter {
			return utf16Limit{a}
		}),
		want: "--- FAIL: TestBrokenAdapterChild/PostMaxChars",
	},
	{
		name: "author name dropped",
		harness: broken(Options{}, func(a channels.Adapter) channels.Adapter {
			return namelessRun{a}
		}),
		want: "inbound Author =",
	},
	{
		name: "hollow uploader",
		harness: broken(Options{Limits: channels.Limits{MaxUploadBytes: 1 << 20}}, func(a channels.Adapter) channels.Adapter {
			return hollowUploader{a}
		}),
		want: "adapter claims Uploader, but the call fails",
	},
	{
		name: "uploader that mangles bytes",
		harness: brokenUpload(func(f channels.Upload) channels.Upload {
			f.Data = []byte(strings.ToValidUTF8(string(f.Data), "?")) // sent as text
			return f
		}),
		want: "uploaded pixel.png has",
	},
	{
		name: "uploader that drops the caption",
		harness: brokenUpload(func(f channels.Upload) channels.Upload {
			f.Caption = ""
			return f
		}),
		want: "want its caption",
	},
	{
		name: "edit that does nothing",
		harness: broken(Options{}, func(a channels.Adapter) channels.Adapter {
			return noopEditor{a}
		}),
		want: "Seen after Edit",
	},
}

// broken returns a harness for a Recorder whose adapter is wrapped by wrap.
func broken(o Options, wrap func(channels.Adapter) channels.Adapter) func(t *testing.T) Harness {
	return func(t *testing.T) Harness {
		h := recorderHarness(o)(t)
		h.Adapter = wrap(h.Adapter)
		return h
	}
}

// brokenUpload returns a harness for an uploading Recorder whose uploads
// are changed by mangle on their way.
func brokenUpload(mangle func(channels.Upload) channels.Upload) func(t *testing.T) Harness {
	return broken(Options{Upload: true, Limits: channels.Limits{MaxUploadBytes: 1 << 20}}, func(a channels.Adapter) channels.Adapter {
		return manglingUploader{a, mangle}
	})
}

type hollowUploader struct{ channels.Adapter }

func (hollowUploader) Upload(context.Context, channels.ThreadRef, channels.Upload) (channels.Handle, error) {
	return channels.Handle{}, fmt.Errorf("upload: %w", errors.ErrUnsupported)
}

type manglingUploader struct {
	channels.Adapter
	mangle func(channels.Upload) channels.Upload
}

func (a manglingUploader) Upload(ctx context.Context, t channels.ThreadRef, f channels.Upload) (channels.Handle, error) {
	return a.Adapter.(channels.Uploader).Upload(ctx, t, a.mangle(f))
}

type hollowEditor struct{ channels.Adapter }

func (hollowEditor) Edit(context.Context, channels.Handle, channels.Message) error {
	return fmt.Errorf("edit: %w", errors.ErrUnsupported)
}

type noopEditor struct{ channels.Adapter }

func (noopEditor) Edit(context.Context, channels.Handle, channels.Message) error { return nil }

type canceledRun struct{ channels.Adapter }

func (a canceledRun) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	a.Adapter.Run(ctx, h)
	return ctx.Err()
}

type leakyRun struct{ channels.Adapter }

func (a leakyRun) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	go func() { select {} }() // an owner-less goroutine; the child process exits anyway
	return a.Adapter.Run(ctx, h)
}

type stopperOnly struct{ channels.Adapter }

func (stopperOnly) StopTyping(context.Context, channels.ThreadRef) error { return nil }

type utf16Limit struct{ channels.Adapter }

func (a utf16Limit) Post(ctx context.Context, t channels.ThreadRef, m channels.Message) (channels.Handle, error) {
	if n := len(utf16.Encode([]rune(m.Text))); n > a.Limits().MaxMessageChars {
		return channels.Handle{}, fmt.Errorf("post: %d UTF-16 units is too long", n)
	}
	return a.Adapter.Post(ctx, t, m)
}

type namelessRun struct{ channels.Adapter }

func (a namelessRun) Run(ctx context.Context, h func(context.Context, channels.Inbound)) error {
	return a.Adapter.Run(ctx, func(ctx context.Context, in channels.Inbound) {
		in.Author.Name = ""
		h(ctx, in)
	})
}

// TestBrokenAdapterChild runs the contract against one broken adapter when
// started by TestContractCatchesBrokenAdapters; otherwise it does nothing.
func TestBrokenAdapterChild(t *testing.T) {
	name := os.Getenv(brokenEnv)
	if name == "" {
		t.Skip("runs only as a child of TestContractCatchesBrokenAdapters")
	}
	waitTimeout = time.Second
	for _, b := range brokenAdapters {
		if b.name == name {
			RunContract(t, b.harness)
			return
		}
	}
	t.Fatalf("no broken adapter %q", name)
}

func TestContractCatchesBrokenAdapters(t *testing.T) {
	if os.Getenv(brokenEnv) != "" {
		t.Skip("in a child process")
	}
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for _, b := range brokenAdapters {
		t.Run(b.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestBrokenAdapterChild$", "-test.v")
			cmd.Env = append(os.Environ(), brokenEnv+"="+b.name)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("child process: err = %v, want a failing exit status; output:\n%s", err, out)
			}
			if !strings.Contains(string(out), b.want) {
				t.Errorf("contract output does not contain %q:\n%s", b.want, out)
			}
		})
	}
}
