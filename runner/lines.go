package runner

import (
	"bufio"
	"errors"
	"io"
	"unicode/utf8"
)

// readLines reads r to its end and calls emit with each line, its newline
// included, so that the pieces put together are the output as it was. A line
// longer than max bytes is emitted in pieces of at most max bytes, cut
// between two UTF-8 characters where it can be.
func readLines(r io.Reader, max int, emit func(string)) error {
	br := bufio.NewReaderSize(r, max)
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		for len(line) > max {
			cut := cutPoint(line, max)
			emit(string(line[:cut]))
			line = append(line[:0], line[cut:]...)
		}
		switch {
		case err == nil:
			emit(string(line))
			line = line[:0]
		case errors.Is(err, bufio.ErrBufferFull):
			// The line goes on: read more of it.
		default:
			if len(line) > 0 {
				emit(string(line))
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// cutPoint returns where to cut b (longer than max) so that the first piece
// is at most max bytes and, if possible, does not split a character.
func cutPoint(b []byte, max int) int {
	for i := max; i > max-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return max
}
