package plugins

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/outpost-dev/outpost/internal/errscrub"
)

// Redacted replaces a job's sensitive value in what the job sends back.
const Redacted = "(sensitive value)"

// minSecret is the length under which a value is not looked for: a shorter
// one would blank out ordinary words.
const minSecret = 4

// Secrets are a job's sensitive values, which the plugin replaces with
// Redacted in every log line, message, plan and error before they leave the
// customer's account. Each value is looked for as it is, line by line when
// it spans lines, and as a JSON string carries it. Safe for concurrent use.
type Secrets struct {
	mu       sync.RWMutex
	values   []string
	replacer *strings.Replacer
}

// NewSecrets returns the secrets of these values (those under 4 bytes are
// ignored).
func NewSecrets(values ...string) *Secrets {
	s := &Secrets{}
	s.Add(values...)
	return s
}

// Add adds values, such as those a job learns with its deferred inputs.
func (s *Secrets) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		quoted, _ := json.Marshal(v) // a string always encodes
		forms := append(strings.Split(v, "\n"), v, string(quoted[1:len(quoted)-1]))
		for _, f := range forms {
			if len(f) >= minSecret && !slices.Contains(s.values, f) {
				s.values = append(s.values, f)
			}
		}
	}
	// The longest first: one value may hold another.
	slices.SortFunc(s.values, func(a, b string) int { return len(b) - len(a) })
	oldnew := make([]string, 0, 2*len(s.values))
	for _, v := range s.values {
		oldnew = append(oldnew, v, Redacted)
	}
	s.replacer = strings.NewReplacer(oldnew...)
}

// String scrubs text (nil Secrets scrub nothing).
func (s *Secrets) String(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.replacer == nil || len(s.values) == 0 {
		return text
	}
	return s.replacer.Replace(text)
}

// Error returns err with a scrubbed message; errors.Is and errors.As still
// see the original.
func (s *Secrets) Error(err error) error { return errscrub.Error(err, s.String) }

// JSON scrubs the strings of a JSON document (object keys and string
// values; a number holding a secret becomes the string Redacted), so it
// stays valid JSON.
func (s *Secrets) JSON(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(s.value(v))
}

func (s *Secrets) value(v any) any {
	switch v := v.(type) {
	case string:
		return s.String(v)
	case json.Number:
		if s.String(v.String()) != v.String() {
			return Redacted
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[s.String(k)] = s.value(x)
		}
		return out
	case []any:
		for i, x := range v {
			v[i] = s.value(x)
		}
	}
	return v
}

// Writer scrubs what is written to w, a line at a time (a value split
// across two writes is still found); Flush writes the last, unfinished
// line.
func (s *Secrets) Writer(w io.Writer) *ScrubWriter { return &ScrubWriter{s: s, w: w} }

// ScrubWriter is Secrets.Writer.
type ScrubWriter struct {
	s   *Secrets
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

// maxLine is how much of a line without a newline is held back; longer, it
// is written as it is so far (a value across that cut is not found).
const maxLine = 64 << 10

func (sw *ScrubWriter) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.buf = append(sw.buf, p...)
	end := bytes.LastIndexByte(sw.buf, '\n') + 1
	if end == 0 && len(sw.buf) > maxLine {
		end = len(sw.buf)
	}
	if end == 0 {
		return len(p), nil
	}
	_, err := io.WriteString(sw.w, sw.s.String(string(sw.buf[:end])))
	sw.buf = append(sw.buf[:0], sw.buf[end:]...)
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back.
func (sw *ScrubWriter) Flush() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if len(sw.buf) == 0 {
		return nil
	}
	_, err := io.WriteString(sw.w, sw.s.String(string(sw.buf)))
	sw.buf = sw.buf[:0]
	return err
}
