package agent

import (
	"context"
	"errors"
	"log/slog"

	acp "github.com/coder/acp-go-sdk"
)

// sdkLog is the ACP SDK's logger: a notification the gateway has no
// handler for (Qwen Code's qwen/notify/session/*, sent every turn) is
// logged at DEBUG, not as the SDK's ERROR. Per ACP a client ignores
// notifications it does not know; the SDK only spares "_" methods.
type sdkLog struct{ slog.Handler }

func (h sdkLog) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError && r.Message == "failed to handle notification" && methodNotFound(r) {
		if !h.Handler.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
		r.Message = "agent notification ignored"
	}
	return h.Handler.Handle(ctx, r)
}

func (h sdkLog) WithAttrs(as []slog.Attr) slog.Handler { return sdkLog{h.Handler.WithAttrs(as)} }
func (h sdkLog) WithGroup(name string) slog.Handler    { return sdkLog{h.Handler.WithGroup(name)} }

// methodNotFound reports whether r's err attribute is JSON-RPC -32601.
func methodNotFound(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		if err, ok := a.Value.Any().(error); ok && a.Key == "err" {
			var re *acp.RequestError
			found = errors.As(err, &re) && re.Code == -32601
			return false
		}
		return true
	})
	return found
}
