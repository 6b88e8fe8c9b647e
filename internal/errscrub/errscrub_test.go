package errscrub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestErrorScrubsTheMessageAndKeepsTheChain(t *testing.T) {
	err := Error(fmt.Errorf("login with s3cret: %w", context.Canceled), func(s string) string {
		return strings.ReplaceAll(s, "s3cret", "***")
	})
	if err.Error() != "login with ***: context canceled" || !errors.Is(err, context.Canceled) {
		t.Errorf("scrubbed: %q (is canceled: %v)", err, errors.Is(err, context.Canceled))
	}
	if Error(nil, strings.ToUpper) != nil {
		t.Error("a nil error scrubbed is not nil")
	}
}
