package registry

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/distribution/distribution/v3"
	repositorymiddleware "github.com/distribution/distribution/v3/registry/middleware/repository"
	"github.com/opencontainers/go-digest"
)

// Blobs on disk are served by the repository middleware below rather than
// by distribution's blob server, which reads every blob, however small,
// through a buffer of 4 MiB allocated per request: on a registry that serves
// small artifacts (terraform modules, charts), those buffers were most of
// its memory allocation and a large part of its CPU (see
// docs/BENCHMARKS.md). The middleware serves the blob's file itself
// (http.ServeContent: ranges, HEAD, If-None-Match), with the headers distribution
// sets, once the repository's own Stat has found the blob linked into that
// repository — so a repository serves only its own blobs, as before.

// directBlobsName is the repository middleware's registered name; its
// option directBlobsRoot is the filesystem driver's root directory.
const (
	directBlobsName = "outpost-direct-blobs"
	directBlobsRoot = "rootdirectory"
)

var directBlobsOnce sync.Once

func registerDirectBlobs() {
	directBlobsOnce.Do(func() {
		err := repositorymiddleware.Register(directBlobsName, func(_ context.Context, repo distribution.Repository, options map[string]any) (distribution.Repository, error) {
			root, ok := options[directBlobsRoot].(string)
			if !ok || root == "" {
				return nil, fmt.Errorf("repository middleware %s: option %q: want the storage directory", directBlobsName, directBlobsRoot)
			}
			return directRepository{Repository: repo, root: root}, nil
		})
		if err != nil {
			panic(fmt.Sprintf("registering the registry's blob middleware: %v", err))
		}
	})
}

type directRepository struct {
	distribution.Repository
	root string
}

func (r directRepository) Blobs(ctx context.Context) distribution.BlobStore {
	return directBlobStore{BlobStore: r.Repository.Blobs(ctx), root: r.root}
}

type directBlobStore struct {
	distribution.BlobStore
	root string
}

// blobCacheMaxAge is the Cache-Control max-age distribution gives blobs
// (they are content-addressed).
const blobCacheMaxAge = 365 * 24 * time.Hour

// ServeBlob serves a blob of the repository from its file. A blob the
// repository does not hold is refused by its Stat; one whose file is not
// where the filesystem driver keeps it, or not of the size recorded, is
// left to distribution.
func (s directBlobStore) ServeBlob(ctx context.Context, w http.ResponseWriter, r *http.Request, dgst digest.Digest) error {
	desc, err := s.Stat(ctx, dgst)
	if err != nil {
		return err
	}
	path, ok := blobDataPath(s.root, desc.Digest)
	if !ok {
		return s.BlobStore.ServeBlob(ctx, w, r, dgst)
	}
	f, err := os.Open(path)
	if err != nil {
		return s.BlobStore.ServeBlob(ctx, w, r, dgst)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != desc.Size {
		return s.BlobStore.ServeBlob(ctx, w, r, dgst)
	}
	h := w.Header()
	h.Set("ETag", fmt.Sprintf(`"%s"`, desc.Digest)) // If-None-Match handled by ServeContent
	h.Set("Cache-Control", fmt.Sprintf("max-age=%.f", blobCacheMaxAge.Seconds()))
	if h.Get("Docker-Content-Digest") == "" {
		h.Set("Docker-Content-Digest", desc.Digest.String())
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", desc.MediaType)
	}
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}

// blobDataPath is where distribution's filesystem driver keeps a blob:
// <root>/docker/registry/v2/blobs/<algorithm>/<first two hex>/<hex>/data.
// Only for the algorithms whose names it uses as they are.
func blobDataPath(root string, d digest.Digest) (string, bool) {
	if d.Validate() != nil || (d.Algorithm() != digest.SHA256 && d.Algorithm() != digest.SHA512) {
		return "", false
	}
	hex := d.Encoded()
	return filepath.Join(root, "docker", "registry", "v2", "blobs", string(d.Algorithm()), hex[:2], hex, "data"), true
}

// OpenBlob opens a blob's file in the registry's storage directory, for a
// caller in this process that reads the blob without HTTP (a release
// bundle's export). It checks no permission and no repository: the caller
// asks the registry first (a HEAD of the blob in its repository, with its
// credential). fs.ErrNotExist when the registry keeps blobs in memory or
// has no file for it.
func (s *Server) OpenBlob(d digest.Digest) (*os.File, error) {
	path, ok := blobDataPath(s.dir, d)
	if s.dir == "" || !ok {
		return nil, fmt.Errorf("blob %s: %w", d, fs.ErrNotExist)
	}
	return os.Open(path)
}
