package api

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

// etagged gives a GET answer an ETag (a digest of its body) and answers 304
// with no body when the request's If-None-Match holds it, so a page that
// polls (the dashboard) re-reads only what changed.
func etagged(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		res := c.Response()
		orig := res.Writer
		bw := &bufferedWriter{ResponseWriter: orig}
		res.Writer = bw
		err := next(c)
		res.Writer = orig
		if bw.status == 0 {
			return err
		}
		if bw.status == http.StatusOK {
			sum := sha256.Sum256(bw.buf.Bytes())
			tag := `"` + hex.EncodeToString(sum[:16]) + `"`
			res.Header().Set("ETag", tag)
			res.Header().Set(echo.HeaderCacheControl, "private, no-cache")
			if noneMatch(c.Request().Header.Get("If-None-Match"), tag) {
				res.Header().Del(echo.HeaderContentType)
				orig.WriteHeader(http.StatusNotModified)
				return err
			}
		}
		orig.WriteHeader(bw.status)
		if _, werr := orig.Write(bw.buf.Bytes()); werr != nil && err == nil {
			err = werr
		}
		return err
	}
}

// noneMatch says whether an If-None-Match header names tag (or is "*").
func noneMatch(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}

// bufferedWriter holds an answer's status and body until the ETag is known.
type bufferedWriter struct {
	http.ResponseWriter
	buf    bytes.Buffer
	status int
}

func (w *bufferedWriter) WriteHeader(code int) { w.status = code }

func (w *bufferedWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.buf.Write(b)
}
