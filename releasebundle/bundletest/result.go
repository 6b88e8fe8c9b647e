package bundletest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/outpost-dev/outpost/protocol"
)

// ReadResult reads an offline deploy's result file.
func ReadResult(t testing.TB, path string) protocol.OfflineResult {
	t.Helper()
	var r protocol.OfflineResult
	raw, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(raw, &r)
	}
	if err != nil {
		t.Fatalf("result %s: %v\n%s", path, err, raw)
	}
	return r
}

// Steps is "name status, …" of a result's steps.
func Steps(r protocol.OfflineResult) string {
	var s []string
	for _, st := range r.Steps {
		s = append(s, st.Name+" "+st.Status)
	}
	return strings.Join(s, ", ")
}
