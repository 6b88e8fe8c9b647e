package testutil

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// DeclareBody sends a request to addr whose headers (header, and a
// Content-Length of n) announce a body it never sends, and returns the
// answer: a server that checks the length answers at once.
func DeclareBody(t testing.TB, addr, method, path string, n int64, header http.Header) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", method, path, addr, n)
	_ = header.Write(&b)
	b.WriteString("\r\n")
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s %s announcing %d bytes: %v", method, path, n, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body)
}

// OverLimit is a body of n bytes of unknown length (sent chunked): the start
// of a JSON object whose string never ends, so a decoder reads on.
func OverLimit(n int64) io.Reader {
	return io.MultiReader(strings.NewReader(`{"name":"`), io.LimitReader(repeat('a'), n-9))
}

type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
