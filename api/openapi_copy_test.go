package api

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var updateOpenAPICopy = flag.Bool("update", false, "rewrite ../apiclient/openapi.json from the served document")

// openAPICopy is the committed copy the CLI's client is generated from.
const openAPICopy = "../apiclient/openapi.json"

// TestClientOpenAPICopyIsServed fails when the document the API serves and the
// copy apiclient is generated from differ, so the CLI's client cannot drift.
func TestClientOpenAPICopyIsServed(t *testing.T) {
	e := newTestEnv(t)
	res := e.send("GET", "/v1/openapi.json", "", nil)
	if res.status != 200 {
		t.Fatalf("openapi.json: %s", res)
	}
	var served bytes.Buffer
	if err := json.Indent(&served, res.body, "", "  "); err != nil {
		t.Fatal(err)
	}
	served.WriteByte('\n')
	if *updateOpenAPICopy {
		if err := os.WriteFile(openAPICopy, served.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	committed, err := os.ReadFile(openAPICopy)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, served.Bytes()) {
		t.Fatalf("%s is not the served document: run `go test ./api -run TestClientOpenAPICopyIsServed -update` "+
			"and `go generate ./apiclient`, and review the diff", openAPICopy)
	}
}
