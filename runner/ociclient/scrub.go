package ociclient

import (
	"encoding/base64"
	"io"
	"strings"

	"github.com/outpost-dev/outpost/internal/errscrub"
)

// Redacted replaces a credential in text.
const Redacted = "[redacted]"

// Scrubber replaces credentials in text: each password as it is, and each
// username:password pair as an HTTP basic-auth header carries it.
type Scrubber struct {
	replacer *strings.Replacer
}

// NewScrubber scrubs the passwords of the given username/password pairs
// (pairs[0] user, pairs[1] password, …). Empty passwords are ignored.
func NewScrubber(pairs ...string) *Scrubber {
	var oldnew []string
	for i := 0; i+1 < len(pairs); i += 2 {
		user, pass := pairs[i], pairs[i+1]
		if pass == "" {
			continue
		}
		basic := user + ":" + pass
		oldnew = append(oldnew,
			pass, Redacted,
			base64.StdEncoding.EncodeToString([]byte(basic)), Redacted,
			base64.URLEncoding.EncodeToString([]byte(basic)), Redacted,
		)
	}
	return &Scrubber{replacer: strings.NewReplacer(oldnew...)}
}

// String scrubs s.
func (s *Scrubber) String(text string) string { return s.replacer.Replace(text) }

// Error returns err with a scrubbed message. errors.Is and errors.As still
// see the original (through Unwrap), so callers can tell a cancellation or
// a registry's status; only the message is what the user is shown.
func (s *Scrubber) Error(err error) error { return errscrub.Error(err, s.String) }

// Writer scrubs every Write to w. A credential split across two writes is
// not recognised: write whole lines.
func (s *Scrubber) Writer(w io.Writer) io.Writer { return scrubWriter{s, w} }

type scrubWriter struct {
	s *Scrubber
	w io.Writer
}

func (sw scrubWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, sw.s.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
