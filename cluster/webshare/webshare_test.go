package webshare

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/acpgw/gateway/cluster/natsnode"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func openLog(t *testing.T) *Log {
	t.Helper()
	n, err := natsnode.Start(natsnode.Options{StoreDir: t.TempDir(), Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Shutdown)
	nc, err := nats.Connect(n.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	l, err := Open(t.Context(), js, Options{Cluster: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// follow collects the changes a follower from the start sees until it
// caught up, then hands each later change to live.
func follow(t *testing.T, l *Log) (initial []Change, live chan Change) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	live = make(chan Change, 16)
	caught := make(chan struct{})
	done := make(chan error, 1)
	up := false
	go func() {
		done <- l.Follow(ctx, func(c Change) {
			if up {
				live <- c
			} else {
				initial = append(initial, c)
			}
		}, func() { up = true; close(caught) })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	<-caught
	return initial, live
}

func keys(cs []Change) []string {
	var out []string
	for _, c := range cs {
		k := c.Key
		if c.Deleted {
			k = "-" + k
		}
		out = append(out, k)
	}
	return out
}

// Puts are compare-and-set on the revision; a follower from the start
// gets the latest value of each key in the order of the last writes, the
// deleted keys' markers, and nothing of a purged prefix; a live follower
// is told of a deletion.
func TestLog(t *testing.T) {
	l := openLog(t)
	ctx := t.Context()
	if _, live := follow(t, l); len(live) != 0 {
		t.Fatal("changes in an empty bucket")
	}
	r1, err := l.Put(ctx, "t.a.i", []byte("1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(ctx, "t.a.i", []byte("x"), 0); !errors.Is(err, ErrStale) {
		t.Fatalf("a second create: %v, want ErrStale", err)
	}
	if _, err := l.Put(ctx, "t.b.i", []byte("b"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(ctx, "t.b.m.m1", []byte("m"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(ctx, "t.a.i", []byte("2"), r1); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Put(ctx, "t.a.i", []byte("3"), r1); !errors.Is(err, ErrStale) {
		t.Fatalf("an update on an old revision: %v, want ErrStale", err)
	}
	if _, err := l.Put(ctx, "t.c.i", []byte("c"), 0); err != nil {
		t.Fatal(err)
	}
	_, live := follow(t, l)
	if err := l.Purge(ctx, "t.b."); err != nil {
		t.Fatal(err)
	}
	del, err := l.Delete(ctx, "t.b.i")
	if err != nil {
		t.Fatal(err)
	}
	if c := <-live; c.Key != "t.b.i" || !c.Deleted || c.Rev != del {
		t.Fatalf("a live follower got %+v, want the deletion of t.b.i at %d", c, del)
	}
	if head, err := l.Head(ctx); err != nil || head != del {
		t.Fatalf("head %d %v, want %d", head, err, del)
	}
	initial, _ := follow(t, l)
	if got := keys(initial); !slices.Equal(got, []string{"t.a.i", "t.c.i", "-t.b.i"}) {
		t.Fatalf("a new follower got %v", got)
	}
	if string(initial[0].Value) != "2" {
		t.Fatalf("t.a.i is %q, want the latest, 2", initial[0].Value)
	}
	if err := l.Purge(ctx, "t.*"); err == nil {
		t.Error("a purge of a wildcard was taken")
	}

	if err := l.PutFile(ctx, "f1-notes.txt", []byte("notes")); err != nil {
		t.Fatal(err)
	}
	if data, _, err := l.GetFile(ctx, "f1-notes.txt"); err != nil || string(data) != "notes" {
		t.Fatalf("file %q %v", data, err)
	}
	if err := l.DeleteFile(ctx, "f1-notes.txt"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.GetFile(ctx, "f1-notes.txt"); !errors.Is(err, ErrNoFile) {
		t.Fatalf("a deleted file: %v, want ErrNoFile", err)
	}
	if err := l.DeleteFile(ctx, "f1-notes.txt"); err != nil {
		t.Fatalf("deleting it again: %v", err)
	}
}
