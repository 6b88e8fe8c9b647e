package notify

import (
	"context"
	"sync"
)

// Bus publishes topics and lets waiters subscribe to them.
type Bus interface {
	// Publish wakes every subscriber of topic, in this and (for Postgres)
	// every other process.
	Publish(ctx context.Context, topic string) error
	// Subscribe returns a channel that receives a value (coalesced, never
	// blocking the publisher) each time topic is published, and a cancel func.
	Subscribe(topic string) (<-chan struct{}, func())
	// Watch calls fn for every topic published anywhere and for every Reset
	// (with topic ""). fn must not block.
	Watch(fn func(topic string)) func()
	Close() error
}

// Topics.
func RunnerTopic(runnerID string) string { return "runner:" + runnerID }
func JobTopic(jobID string) string       { return "job:" + jobID }
func BuildTopic(buildID string) string   { return "build:" + buildID }

// RoundEndTopic is published when a runner ends a claim round, so that the
// gateway replica holding that round's claim answers it.
func RoundEndTopic(runnerID, round string) string { return "round-end:" + runnerID + ":" + round }

// JobLogsTopic is published when log lines of a job arrive; kept apart from
// JobTopic so a chatty job does not wake everyone awaiting its status.
func JobLogsTopic(jobID string) string { return "job-logs:" + jobID }

// fanout is the in-process part shared by both buses.
type fanout struct {
	mu       sync.Mutex
	subs     map[string]map[chan struct{}]struct{}
	watchers map[int]func(string)
	nextID   int
}

func newFanout() *fanout {
	return &fanout{subs: map[string]map[chan struct{}]struct{}{}, watchers: map[int]func(string){}}
}

func (f *fanout) deliver(topic string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs[topic] {
		wake(ch)
	}
	for _, fn := range f.watchers {
		fn(topic)
	}
}

// reset wakes everyone: used after a lost connection, when notifications may
// have been missed.
func (f *fanout) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, set := range f.subs {
		for ch := range set {
			wake(ch)
		}
	}
	for _, fn := range f.watchers {
		fn("")
	}
}

func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (f *fanout) Subscribe(topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	f.mu.Lock()
	set := f.subs[topic]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		f.subs[topic] = set
	}
	set[ch] = struct{}{}
	f.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			f.mu.Lock()
			delete(f.subs[topic], ch)
			if len(f.subs[topic]) == 0 {
				delete(f.subs, topic)
			}
			f.mu.Unlock()
		})
	}
}

func (f *fanout) Watch(fn func(string)) func() {
	f.mu.Lock()
	id := f.nextID
	f.nextID++
	f.watchers[id] = fn
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.watchers, id)
		f.mu.Unlock()
	}
}

// Local is the in-process bus of the embedded mode.
type Local struct{ *fanout }

// NewLocal returns an in-process bus.
func NewLocal() *Local { return &Local{newFanout()} }

// Publish delivers topic to this process's subscribers.
func (l *Local) Publish(_ context.Context, topic string) error {
	l.deliver(topic)
	return nil
}

// Close does nothing: there is no connection.
func (l *Local) Close() error { return nil }
