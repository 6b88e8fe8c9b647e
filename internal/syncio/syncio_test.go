package syncio

import (
	"strings"
	"sync"
	"testing"
)

// TestConcurrentWrites: lines written from many goroutines arrive whole
// (run with -race to see the lock at work).
func TestConcurrentWrites(t *testing.T) {
	var b Buffer
	w := &Writer{W: &b}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				w.Write([]byte("0123456789\n"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		if l != "0123456789" {
			t.Fatalf("a torn line: %q", l)
		}
	}
}
