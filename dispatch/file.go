package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/acpgw/gateway/channels"
	"github.com/acpgw/gateway/sysmsg"
)

// File queues f for the thread, in order with the outputs pushed before
// it, and delivered like them: held by a final_only turn, paced, retried
// while the platform cannot be reached. Where the adapter is no
// channels.Uploader, or f is larger than its Limits.MaxUploadBytes, the
// thread gets a notice with the file's name and size in its place
// (sysmsg.FileNotSent), and so it does when the platform refuses the file.
// A caption longer than the channel's limit is posted as text before the
// file, in as many messages as it takes.
func (l *Lane) File(now time.Time, f channels.Upload) { l.FileThen(now, f, nil) }

// FileThen is File, and then done (if not nil) is called once on the
// lane's goroutine: with nil when the file was posted, with an error when
// a notice was posted in its place or it was given up after an outage.
// It is not called for a file still queued when the lane is dropped
// (Runner.Close). Held reports whether a final_only turn holds it until
// the turn ends.
func (l *Lane) FileThen(now time.Time, f channels.Upload, done func(error)) (held bool) {
	l.visible(now)
	limit := UploadLimit(l.ad)
	if limit <= 0 || len(f.Data) > limit {
		l.log.Info("a file cannot be shown here; posting a notice instead", "thread", l.thread, "file", f.Name, "bytes", len(f.Data), "limit", limit)
		l.enqueue(&item{kind: itemPost, msgKind: channels.KindNotice, text: fileNotice(f, limit, false), since: now})
		if done != nil {
			if limit <= 0 {
				done(errors.New("this chat takes no files: the thread was told the file's name and size instead"))
			} else {
				done(fmt.Errorf("the file has %d bytes, more than the %d this chat takes: the thread was told its name and size instead", len(f.Data), limit))
			}
		}
		return false
	}
	if f.Caption != "" && !isBlank(f.Caption) {
		parts := l.splitText(f.Caption)
		for _, p := range parts[:len(parts)-1] {
			l.enqueue(&item{kind: itemPost, msgKind: channels.KindText, text: p.Text(), since: now})
		}
		f.Caption = parts[len(parts)-1].Text()
	} else {
		f.Caption = ""
	}
	l.enqueue(&item{kind: itemFile, msgKind: channels.KindFile, text: f.Caption, upload: &f, fileDone: done, since: now})
	return l.hold
}

// reportFile reports how the file item it went (FileThen), once.
func (it *item) reportFile(err error) {
	if it.fileDone != nil {
		it.fileDone(err)
		it.fileDone = nil
	}
}

// UploadLimit returns the size of the largest file a puts into a thread
// (Lane.File), 0 when it takes no files: its Limits.MaxUploadBytes where
// it is a channels.Uploader. A caller that can refuse a file early (the
// agent's send_file) says so with it.
func UploadLimit(a channels.Adapter) int {
	if _, ok := channels.As[channels.Uploader](a); !ok {
		return 0
	}
	return max(a.Limits().MaxUploadBytes, 0)
}

func fileNotice(f channels.Upload, limit int, refused bool) string {
	return sysmsg.Text(sysmsg.FileNotSent{Name: f.Name, Size: len(f.Data), Limit: limit, Refused: refused})
}

// stepFile uploads the file item it at the head of the queue.
func (l *Lane) stepFile(ctx context.Context, now time.Time, it *item) (time.Time, bool) {
	if w := l.postDue(now); !w.IsZero() {
		return w, false
	}
	_, err := l.uploader.Upload(ctx, l.thread, *it.upload)
	switch l.judge(now, "upload", err) {
	case retry:
		return l.blockedUntil, false
	case abandon:
		l.abandon(now, err)
		return time.Time{}, true
	case drop:
		// Refused for good: the thread is told which file it misses.
		it.reportFile(fmt.Errorf("the chat refused the file (the thread was told its name and size): %w", err))
		l.log.Error("the platform refused a file; posting a notice instead", "thread", l.thread, "file", it.upload.Name, "bytes", len(it.upload.Data), "err", err)
		l.queue[0] = &item{kind: itemPost, msgKind: channels.KindNotice, text: fileNotice(*it.upload, l.limits.MaxUploadBytes, true), since: it.since}
		return time.Time{}, true
	}
	l.typingAfterPost(now)
	l.obs.Delivered("upload", it.msgKind, now.Sub(it.since))
	l.pop()
	it.reportFile(nil)
	return time.Time{}, true
}
