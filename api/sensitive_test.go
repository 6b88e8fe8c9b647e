package api

import (
	"bytes"
	"context"
	"testing"

	"github.com/outpost-dev/outpost/store/storetest"
)

// POST /v1/installs takes an input's sensitivity from the app's config: a
// raw call that gives db_password without "sensitive" has it sealed and
// hidden all the same, in the answer, in reads and in a dump of the database.
func TestCreateInstallTakesSensitivityFromConfig(t *testing.T) {
	e := newTestEnv(t)
	appID := e.exampleApp()
	const secret = "raw-call-pw-5e1d"
	var created installAnswer
	res := e.call("POST", "/v1/installs", map[string]any{"app_id": appID, "name": "raw", "inputs": []map[string]any{
		{"name": "db_password", "value": secret}, {"name": "region", "value": "eu-west-3"}}}, 201, &created)
	read := e.call("GET", "/v1/installs/"+created.ID, nil, 200, nil)
	for _, body := range [][]byte{res.body, read.body} {
		if bytes.Contains(body, []byte(secret)) || !bytes.Contains(body, []byte("db_password")) {
			t.Fatalf("an answer shows the value the config declares sensitive, or not the input: %s", body)
		}
	}
	full, err := e.store.GetInstall(context.Background(), e.org.ID, created.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range full.Inputs {
		if in.Name == "db_password" && (!in.Sensitive || in.Value != secret) {
			t.Fatalf("db_password stored as %+v, want sensitive with its value", in)
		}
	}
	dump := storetest.DatabaseBytes(t, e.store)
	if !bytes.Contains(dump, []byte("eu-west-3")) || bytes.Contains(dump, []byte(secret)) {
		t.Fatalf("a dump of the database (%d bytes) holds the sensitive value, or not the plain one", len(dump))
	}
}
