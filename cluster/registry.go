package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// WorkerInfo is what a worker declares for placement.
type WorkerInfo struct {
	// ID is the worker's id, unique in the cluster (letters, digits, "-"
	// and "_").
	ID string `json:"id"`
	// Load is how busy the worker is (its threads, or its running
	// agents): a claim prefers the lowest.
	Load int `json:"load"`
	// Agents names the agents the worker can run (agents.list names, and
	// "demo"); a thread goes only to a worker that can run its agent.
	Agents []string `json:"agents"`
}

// decodeWorker reads a stored WorkerInfo.
func decodeWorker(b []byte) (WorkerInfo, error) {
	var w WorkerInfo
	if err := json.Unmarshal(b, &w); err != nil {
		return WorkerInfo{}, fmt.Errorf("cluster: worker info: %w", err)
	}
	if !nameRE.MatchString(w.ID) {
		return WorkerInfo{}, fmt.Errorf("cluster: worker info: bad id %q", w.ID)
	}
	return w, nil
}

// Registry is the cluster's live workers as the bucket <cluster>_workers
// holds them: each worker announces itself (and its load) at least once
// per TTL, and an entry not renewed expires. A Registry keeps a view of it
// fed by a watch, so Pick does no I/O and every worker decides placement
// alone, from the same data, without a coordinator. Between a worker's
// announcements the view also counts the threads Place sent it from here,
// so a burst of new threads spreads instead of all going to the worker
// that last looked least loaded.
type Registry struct {
	kv jetstream.KeyValue
	w  jetstream.KeyWatcher

	mu      sync.Mutex // guards the fields below
	workers map[string]WorkerInfo
	// placed counts the threads Place sent to each worker since the
	// view got its last announcement (which counts them, or will).
	placed  map[string]int
	changed chan struct{} // closed and replaced on every change

	done chan struct{} // closed when the watch loop has stopped
}

// RegistryOptions configure OpenRegistry.
type RegistryOptions struct {
	Cluster  string        // cluster.name
	TTL      time.Duration // an entry not announced again within TTL expires
	Replicas int           // copies of the bucket
}

// OpenRegistry creates or opens the worker bucket and returns once its
// view holds the workers there. Close stops it.
func OpenRegistry(ctx context.Context, js jetstream.JetStream, o RegistryOptions) (*Registry, error) {
	kv, err := openBucket(ctx, js, jetstream.KeyValueConfig{
		Bucket:         o.Cluster + "_workers",
		Description:    "live workers: load and agents, for placement",
		History:        1,
		TTL:            o.TTL,
		LimitMarkerTTL: max(o.TTL, time.Second),
		Storage:        jetstream.FileStorage,
		Replicas:       max(o.Replicas, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: worker bucket: %w", err)
	}
	// The watch lives as long as the Registry, not as ctx.
	w, err := kv.WatchAll(context.Background())
	if err != nil {
		return nil, fmt.Errorf("cluster: watch workers: %w", err)
	}
	r := &Registry{kv: kv, w: w, workers: map[string]WorkerInfo{}, placed: map[string]int{}, changed: make(chan struct{}), done: make(chan struct{})}
	ready := make(chan struct{})
	go r.watch(ready)
	select {
	case <-ready:
		return r, nil
	case <-ctx.Done():
		r.Close()
		return nil, ctx.Err()
	}
}

func (r *Registry) watch(ready chan struct{}) {
	defer close(r.done)
	for e := range r.w.Updates() {
		if e == nil {
			close(ready)
			continue
		}
		r.mu.Lock()
		r.seenLocked(e.Key(), e.Operation() == jetstream.KeyValuePut, e.Value())
		r.mu.Unlock()
	}
}

// seenLocked takes an entry of the bucket into the view: a worker's
// announcement (put) or its going (a delete, or its entry expired). The
// threads placed there since its last announcement are counted in this
// one, or gone with the worker.
func (r *Registry) seenLocked(key string, put bool, value []byte) {
	if put {
		if w, err := decodeWorker(value); err == nil && w.ID == key {
			r.workers[w.ID] = w
			delete(r.placed, w.ID)
		}
	} else {
		delete(r.workers, key)
		delete(r.placed, key)
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

// Close stops the watch.
func (r *Registry) Close() {
	_ = r.w.Stop()
	<-r.done
}

// Announce declares (or refreshes) a worker; call it at least once per
// TTL.
func (r *Registry) Announce(ctx context.Context, w WorkerInfo) error {
	if !nameRE.MatchString(w.ID) {
		return fmt.Errorf("cluster: worker id %q: only letters, digits, - and _", w.ID)
	}
	b, _ := json.Marshal(w)
	if _, err := r.kv.Put(ctx, w.ID, b); err != nil {
		return fmt.Errorf("cluster: announce %s: %w", w.ID, err)
	}
	return nil
}

// Withdraw removes a worker at once (a draining worker), instead of after
// the TTL.
func (r *Registry) Withdraw(ctx context.Context, id string) error {
	if err := r.kv.Delete(ctx, id); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("cluster: withdraw %s: %w", id, err)
	}
	return nil
}

// Workers returns the workers as they announced themselves, sorted by id.
func (r *Registry) Workers() []WorkerInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.workersLocked(false)
}

// workersLocked returns the view sorted by id, each load with the threads
// placed since its announcement if withPlaced.
func (r *Registry) workersLocked(withPlaced bool) []WorkerInfo {
	ws := make([]WorkerInfo, 0, len(r.workers))
	for _, w := range r.workers {
		if withPlaced {
			w.Load += r.placed[w.ID]
		}
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b WorkerInfo) int { return cmp.Compare(a.ID, b.ID) })
	return ws
}

// Await returns once ok holds for the view (checked now and on every
// change).
func (r *Registry) Await(ctx context.Context, ok func([]WorkerInfo) bool) error {
	for {
		r.mu.Lock()
		ch := r.changed
		r.mu.Unlock()
		if ok(r.Workers()) {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Pick is the worker a thread that nobody holds should go to: of the
// workers that can run agent ("" = any), the least loaded (its announced
// load, plus the threads Place sent it since); equal loads are broken by a
// hash of the thread and the worker, so threads spread over equal workers
// and every worker picks the same one. ok is false when no worker can run
// the agent.
func (r *Registry) Pick(thread, agent string) (id string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return pick(r.workersLocked(true), thread, agent)
}

// Place is Pick, and counts the thread into the picked worker's load in
// this view until the worker announces itself again (its announcement
// counts the threads it claimed). Workers place the threads of a burst
// each from its own view: each spreads its share, so the burst spreads,
// within a few threads of even over equal workers.
func (r *Registry) Place(thread, agent string) (id string, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok = pick(r.workersLocked(true), thread, agent)
	if ok {
		r.placed[id]++
	}
	return id, ok
}

func pick(ws []WorkerInfo, thread, agent string) (string, bool) {
	var best WorkerInfo
	var bestScore uint64
	found := false
	for _, w := range ws {
		if agent != "" && !slices.Contains(w.Agents, agent) {
			continue
		}
		s := score(thread, w.ID)
		if !found || w.Load < best.Load || w.Load == best.Load && s > bestScore {
			best, bestScore, found = w, s, true
		}
	}
	return best.ID, found
}

// score is the rendezvous hash of a thread on a worker. FNV-1a alone
// keeps the last bytes' differences in the low bits, so workers whose ids
// differ at the end (w1, w2, w3) were ranked alike for every thread (w1
// won half the ties); the final mix (murmur3's) spreads them.
func score(thread, worker string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(thread))
	h.Write([]byte{0})
	h.Write([]byte(worker))
	x := h.Sum64()
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}
