package syncio

import (
	"bytes"
	"io"
	"sync"
)

// Writer serialises the writes into W.
type Writer struct {
	mu sync.Mutex
	W  io.Writer
}

func (w *Writer) Write(p []byte) (int, error) { return w.write(w.W, p) }

// write writes p into dst under w's lock.
func (w *Writer) write(dst io.Writer, p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return dst.Write(p)
}

// Buffer is a bytes.Buffer that goroutines may share. Its zero value is
// empty and ready to use.
type Buffer struct {
	w   Writer
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) { return b.w.write(&b.buf, p) }

// String returns what was written so far.
func (b *Buffer) String() string {
	b.w.mu.Lock()
	defer b.w.mu.Unlock()
	return b.buf.String()
}
