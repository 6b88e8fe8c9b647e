package support

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// Redacted replaces what the redactor removes.
const Redacted = "[REDACTED]"

// credentialPatterns find what looks like a credential. A pattern with a group keeps what its first
// group matched (the key, "password=") and replaces the rest of the match.
var credentialPatterns = []*regexp.Regexp{
	// The platform's own tokens: API, registration, runner and state tokens.
	regexp.MustCompile(`\bop(?:at|rg|rn|st)_[A-Za-z0-9_-]{6,}`),
	regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)`),
	regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{6,}`),
	regexp.MustCompile(`\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`),
	// key=value, key: value and "key": "value", for keys that name a secret.
	regexp.MustCompile(`(?i)((?:password|passwd|pwd|secret|token|api[_-]?key|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?key[_-]?data|credentials?)["']?\s*[:=]\s*["']?)[^\s"'&,;}]+`),
	// user:password@ in URLs.
	regexp.MustCompile(`(://[^:/?#\s@]+:)[^@/?#\s]+@`),
}

// redactor removes the install's sensitive values and anything that looks like a credential.
type redactor struct {
	values []string // longest first: one may hold another
}

// newRedactor redacts values, each also in its JSON-escaped form (as it shows inside a JSON document).
// Every non-empty value is redacted, however short: a bundle must hold none of them.
func newRedactor(values []string) *redactor {
	seen := map[string]bool{}
	var out []string
	for _, v := range values {
		forms := []string{v, strings.TrimSpace(v)}
		if b, err := json.Marshal(v); err == nil {
			forms = append(forms, string(b[1:len(b)-1]))
		}
		for _, f := range forms {
			if f != "" && !seen[f] {
				seen[f] = true
				out = append(out, f)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return &redactor{values: out}
}

// redact returns s without the sensitive values and credentials.
func (r *redactor) redact(s string) string {
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, Redacted)
	}
	for _, p := range credentialPatterns {
		s = p.ReplaceAllStringFunc(s, func(m string) string {
			sub := p.FindStringSubmatch(m)
			if len(sub) > 1 && sub[1] != "" {
				if strings.HasPrefix(sub[1], "://") {
					return sub[1] + Redacted + "@"
				}
				return sub[1] + Redacted
			}
			return Redacted
		})
	}
	return s
}

// Logs cut at a byte limit are cut back to whole lines before they are
// redacted: a credential the redactor would match whole could otherwise be
// left in half, its start at the cut.

// fromFirstLine drops what comes before the first line break of a log whose
// start was cut.
func fromFirstLine(log []byte) []byte {
	if i := bytes.IndexByte(log, '\n'); i >= 0 {
		return log[i+1:]
	}
	return nil
}

// toLastLine drops what comes after the last line break of a log that may
// have been cut at limit bytes.
func toLastLine(log []byte, limit int) []byte {
	if len(log) < limit {
		return log
	}
	return log[:bytes.LastIndexByte(log, '\n')+1]
}
