package releasebundle

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// copyBuffer is the buffer blobs are read through when not copied by the
// kernel.
const copyBuffer = 1 << 20

// scanned is what one pass over the tar found.
type scanned struct {
	blobs     map[string]int64 // digest → size, each checked
	signature []byte
}

// section is a blob's content in the tar file.
type section struct {
	digest      string // as its name says
	offset, len int64
}

// scanTar reads the bundle's headers once, then checks every blob
// against the digest its name says, as many at a time as the process has
// CPUs (hashing is most of verify's time).
func scanTar(path string) (scanned, error) {
	f, err := os.Open(path)
	if err != nil {
		return scanned{}, err
	}
	defer f.Close()
	s := scanned{blobs: map[string]int64{}}
	var blobs []section
	for tr := tar.NewReader(f); ; {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return scanned{}, refuse("the tar", "%v", err)
		}
		b, err := s.entry(f, tr, hdr)
		if err != nil {
			return scanned{}, err
		}
		if b != nil {
			blobs = append(blobs, *b)
		}
	}
	if s.signature == nil {
		return scanned{}, refuse("signature", "the bundle has no %s", SignatureFile)
	}
	if err := checkBlobs(f, blobs); err != nil {
		return scanned{}, err
	}
	for _, b := range blobs {
		s.blobs[b.digest] = b.len
	}
	return s, nil
}

// entry reads the signature, and returns where a blob is: a regular
// file's content starts where tar.Reader's header reading left the file
// (what oras-go's tar reading assumes too).
func (s *scanned) entry(f *os.File, tr *tar.Reader, hdr *tar.Header) (*section, error) {
	name := hdr.Name
	switch {
	case name == SignatureFile:
		raw, err := io.ReadAll(io.LimitReader(tr, 64<<10))
		s.signature = raw
		return nil, err
	case strings.HasPrefix(name, ocispec.ImageBlobsDir+"/sha256/"):
		want := "sha256:" + strings.TrimPrefix(name, ocispec.ImageBlobsDir+"/sha256/")
		if hdr.Typeflag != tar.TypeReg || sparse(hdr) {
			return nil, refuse("blob "+want, "not a regular file in the tar (type %q)", hdr.Typeflag)
		}
		offset, err := f.Seek(0, io.SeekCurrent)
		if err != nil {
			return nil, err
		}
		return &section{digest: want, offset: offset, len: hdr.Size}, nil
	}
	return nil, nil
}

func sparse(hdr *tar.Header) bool {
	for k := range hdr.PAXRecords {
		if strings.HasPrefix(k, "GNU.sparse.") {
			return true
		}
	}
	return false
}

// checkBlobs hashes the blobs, several at a time; a refusal names the
// first in the tar that does not match its name.
func checkBlobs(f *os.File, blobs []section) error {
	errs := make([]error, len(blobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(blobs)) {
		wg.Go(func() {
			buf := make([]byte, copyBuffer)
			for i := range next {
				errs[i] = checkBlob(f, blobs[i], buf)
			}
		})
	}
	for i := range blobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkBlob(f *os.File, b section, buf []byte) error {
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.NewSectionReader(f, b.offset, b.len), buf)
	if err == nil && n != b.len {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return refuse("blob "+b.digest, "%v", err)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != b.digest {
		return refuse("blob "+b.digest, "its content's digest is %s", got)
	}
	return nil
}
