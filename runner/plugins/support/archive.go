package support

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"time"
)

// archive writes the bundle's tar.gz, every part redacted on its way in.
type archive struct {
	f      *os.File
	gz     *gzip.Writer
	tw     *tar.Writer
	redact *redactor
	now    time.Time
	parts  []string
}

func newArchive(path string, r *redactor) (*archive, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating the bundle: %w", err)
	}
	gz := gzip.NewWriter(f)
	return &archive{f: f, gz: gz, tw: tar.NewWriter(gz), redact: r, now: time.Now().UTC()}, nil
}

// add writes one part, redacted, as bundle/<name>.
func (a *archive) add(name, content string) error {
	body := []byte(a.redact.redact(content))
	hdr := &tar.Header{Name: "bundle/" + name, Mode: 0o600, Size: int64(len(body)), ModTime: a.now, Typeflag: tar.TypeReg}
	if err := a.tw.WriteHeader(hdr); err != nil {
		return fmt.Errorf("bundle part %s: %w", name, err)
	}
	if _, err := a.tw.Write(body); err != nil {
		return fmt.Errorf("bundle part %s: %w", name, err)
	}
	a.parts = append(a.parts, name)
	return nil
}

// close finishes the archive and returns its size and SHA-256.
func (a *archive) close() (int64, string, error) {
	err := a.tw.Close()
	if gerr := a.gz.Close(); err == nil {
		err = gerr
	}
	if cerr := a.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, "", fmt.Errorf("writing the bundle: %w", err)
	}
	f, err := os.Open(a.f.Name())
	if err != nil {
		return 0, "", fmt.Errorf("reading the bundle: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return 0, "", fmt.Errorf("reading the bundle: %w", err)
	}
	return n, hex.EncodeToString(h.Sum(nil)), nil
}
