package runner

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestReadLinesSplitsLongLinesWithoutLosingAByte(t *testing.T) {
	const max = 16
	long := strings.Repeat("0123456789", 5)  // 50 bytes
	accents := "a" + strings.Repeat("é", 20) // a 2-byte character straddles byte 16
	input := "short\n" + long + "\n\nno newline at the end " + accents

	var pieces []string
	if err := readLines(strings.NewReader(input), max, func(s string) { pieces = append(pieces, s) }); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pieces, ""); got != input {
		t.Fatalf("pieces put together:\n%q\nwant:\n%q", got, input)
	}
	for _, p := range pieces {
		if len(p) > max {
			t.Errorf("piece %q is %d bytes, more than %d", p, len(p), max)
		}
		if !utf8.ValidString(p) {
			t.Errorf("piece %q splits a character", p)
		}
	}
	wantStart := []string{"short\n", "0123456789012345", "6789012345678901", "2345678901234567", "89\n", "\n"}
	if !slices.Equal(pieces[:len(wantStart)], wantStart) {
		t.Errorf("pieces %q, want them to start with %q", pieces, wantStart)
	}
}
