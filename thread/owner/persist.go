package owner

import (
	"context"
	"log/slog"
	"time"

	"github.com/acpgw/gateway/channels"
)

// writeRetries are the pauses between the attempts of a database write
// that failed: a database locked by another process (a backup, `sqlite3`)
// or a full disk often recovers within seconds.
var writeRetries = [...]time.Duration{100 * time.Millisecond, 500 * time.Millisecond, 2 * time.Second}

// WriteTimeout bounds one attempt of a database write.
const WriteTimeout = 10 * time.Second

// Persist runs write until it succeeds, trying again after each of
// writeRetries, and returns the last error (or ctx's, when ctx ends
// first). Each failed attempt is logged; what names the record ("the
// binding"). It blocks; callers pass a context that a shutdown does not
// cancel, so that what a turn did is recorded.
func Persist(ctx context.Context, log *slog.Logger, th channels.ThreadRef, what string, write func(context.Context) error) error {
	for attempt := 0; ; attempt++ {
		wctx, cancel := context.WithTimeout(ctx, WriteTimeout)
		err := write(wctx)
		cancel()
		if err == nil {
			if attempt > 0 {
				log.Info("saved "+what+" after all", "thread", th, "attempts", attempt+1)
			}
			return nil
		}
		if attempt == len(writeRetries) || ctx.Err() != nil {
			return err
		}
		wait := writeRetries[attempt]
		log.Warn("cannot save "+what+"; trying again", "thread", th, "attempt", attempt+1, "in", wait, "err", err)
		if !Sleep(ctx, wait) {
			return err
		}
	}
}
