package api

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/fstest"
)

// A deploy of a config version the app does not have, or whose inputs the
// install does not satisfy, is refused naming config_version, before any
// operation starts; a sensitive value is never echoed. (Deploys that start
// are tested end to end, in package e2e.)
func TestDeployConfigRefused(t *testing.T) {
	e := newTestEnv(t)
	app, inst := e.fixture()
	path := "/v1/installs/" + inst.ID + "/deploy"
	e.call("POST", path, map[string]any{"config_version": 1}, 422, nil)
	e.call("POST", path, nil, 409, nil) // no config yet: nothing to deploy

	e.syncBuilds(app.ID, exampleFiles(t), 201)
	res := e.call("POST", path, nil, 422, nil)
	if !strings.Contains(string(res.body), `config version 1 requires input \"db_password\", which the install does not set`) {
		t.Errorf("deploy without a required input = %s", res)
	}
	const secret = "s3cret-n0t-a-number"
	e.call("PATCH", "/v1/installs/"+inst.ID+"/inputs", map[string]any{"set": []map[string]any{
		{"name": "db_password", "value": secret, "sensitive": true}}}, 200, nil)
	v2 := exampleFiles(t)
	toml := string(v2["outpost.toml"].Data)
	v2["outpost.toml"] = &fstest.MapFile{Data: []byte(strings.Replace(toml, "name = \"db_password\"\ntype = \"string\"",
		"name = \"db_password\"\ntype = \"number\"", 1)), Mode: 0o644}
	e.syncBuilds(app.ID, v2, 201)

	for _, tc := range []struct {
		body any
		want int
		says string
	}{
		{map[string]any{"config_version": 3}, 422, "the app has no config version 3 (the latest is 2)"},
		{map[string]any{"config_version": -1}, 400, "-1 is not a version"},
		{nil, 422, `config version 2 takes input "db_password" as a number: the install's value is not one`},
	} {
		res := e.call("POST", path, tc.body, tc.want, nil)
		var got struct{ Field, Message string }
		json.Unmarshal(res.body, &got)
		if got.Field != "config_version" || !strings.Contains(got.Message, tc.says) || bytes.Contains(res.body, []byte(secret)) {
			t.Errorf("deploy %v = %s, want config_version saying %q", tc.body, res, tc.says)
		}
	}
}
