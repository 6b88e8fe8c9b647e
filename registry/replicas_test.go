package registry_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/outpost-dev/outpost/registry"
)

// Two registries on one directory, as API replicas behind one address: an
// upload begun at one is finished at the other when they share the upload
// secret (Tokens.UploadSecret), and refused when they do not.
func TestUploadContinuesOnAnotherReplica(t *testing.T) {
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared=%v", shared), func(t *testing.T) {
			dir := t.TempDir()
			cfg := func() registry.Config {
				c := registry.Config{Dir: dir}
				if shared {
					c.UploadSecret = registry.UploadSecret(key)
				}
				return c
			}
			a, b := start(t, cfg()), start(t, cfg())
			blob := []byte("a layer pushed across replicas")
			code := uploadAcross(t, a, b, "org/app", blob)
			if shared && code != http.StatusCreated {
				t.Fatalf("finishing the upload at the other replica: %d, want 201", code)
			}
			if !shared && code == http.StatusCreated {
				t.Fatal("an upload signed by another secret was accepted: the test shows nothing")
			}
			if !shared {
				return
			}
			digest := fmt.Sprintf("sha256:%x", sha256.Sum256(blob))
			if resp, got := get(t, "GET", "http://"+a.Addr()+"/v2/org/app/blobs/"+digest); resp.StatusCode != http.StatusOK || !bytes.Equal(got, blob) {
				t.Fatalf("GET the blob at the first replica: %d %q", resp.StatusCode, got)
			}
		})
	}
}

// uploadAcross begins a monolithic upload of blob at a, sends it to b at the
// location a answered, and returns b's status.
func uploadAcross(t *testing.T, a, b *registry.Server, repo string, blob []byte) int {
	t.Helper()
	resp, err := http.Post("http://"+a.Addr()+"/v2/"+repo+"/blobs/uploads/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("begin upload: %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	loc.Scheme, loc.Host = "http", b.Addr()
	q := loc.Query()
	q.Set("digest", fmt.Sprintf("sha256:%x", sha256.Sum256(blob)))
	loc.RawQuery = q.Encode()
	req, _ := http.NewRequest("PUT", loc.String(), bytes.NewReader(blob))
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
