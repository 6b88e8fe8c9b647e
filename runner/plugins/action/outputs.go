package action

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// readOutputs reads the outputs file a step wrote; none when there is no
// such file.
func readOutputs(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, protocol.MaxActionOutputsBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > protocol.MaxActionOutputsBytes {
		return nil, fmt.Errorf("more than the limit of %d bytes", protocol.MaxActionOutputsBytes)
	}
	return parseOutputs(b)
}

// parseOutputs parses one JSON object of strings, or `key=value` lines
// (blank lines and # comments skipped; the value is the rest of the line).
// On a bad line it returns the outputs of the good ones with its error.
func parseOutputs(b []byte) (map[string]string, error) {
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		return parseJSON(t)
	}
	out := map[string]string{}
	var first error
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		var err error
		switch {
		case !ok:
			err = errors.New("not key=value (nor a blank line or a # comment)")
		case !protocol.ValidActionOutputName(key):
			err = badKey(key)
		case !utf8.ValidString(value):
			err = fmt.Errorf("the value of %s is not UTF-8", key)
		default:
			out[key] = value
		}
		if err != nil && first == nil {
			first = fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return out, first
}

func parseJSON(b []byte) (map[string]string, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	out := make(map[string]string, len(raw))
	for key, v := range raw {
		if !protocol.ValidActionOutputName(key) {
			return nil, badKey(key)
		}
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("the value of %s is not a string", key)
		}
		out[key] = s
	}
	return out, nil
}

func badKey(key string) error {
	if len(key) > 64 {
		key = key[:64] + "…"
	}
	return fmt.Errorf("key %q: an output's name is a letter or _, then letters, digits and _", key)
}

// outputsWatch learns the step's sensitive outputs while it runs, so that
// a value the step writes to its outputs file and then prints is masked:
// before each write to the log it reads the file again when it changed.
type outputsWatch struct {
	path      string
	sensitive []string
	secrets   *plugins.Secrets
	mu        sync.Mutex
	size      int64
	mod       time.Time
}

// learn adds the sensitive outputs the file holds now to the secrets.
func (w *outputsWatch) learn() {
	if len(w.sensitive) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	fi, err := os.Stat(w.path)
	// A file changed within a second is read again: a coarse clock may
	// not have moved its time at a rewrite of the same size.
	if err != nil || fi.Size() > protocol.MaxActionOutputsBytes ||
		fi.Size() == w.size && fi.ModTime().Equal(w.mod) && time.Since(fi.ModTime()) > time.Second {
		return
	}
	w.size, w.mod = fi.Size(), fi.ModTime()
	b, err := os.ReadFile(w.path)
	if err != nil {
		return
	}
	out, _ := parseOutputs(b) // what parses so far
	w.add(out)
}

// add adds the values of out's sensitive outputs to the secrets.
func (w *outputsWatch) add(out map[string]string) {
	for _, k := range w.sensitive {
		if v, ok := out[k]; ok {
			w.secrets.Add(v)
		}
	}
}

// writer is w.learn, then dst.
func (w *outputsWatch) writer(dst io.Writer) io.Writer { return learnWriter{w, dst} }

type learnWriter struct {
	w   *outputsWatch
	dst io.Writer
}

func (l learnWriter) Write(p []byte) (int, error) {
	l.w.learn()
	return l.dst.Write(p)
}
