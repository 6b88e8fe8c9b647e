package api

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// TestBadInput: each bad request gets a 4xx naming what is wrong, and no
// stored row changes.
func TestBadInput(t *testing.T) {
	e := newTestEnv(t)
	w := e.world()
	app, inst, job, cmd := w.app, w.inst, w.job, w.cmd

	big := `{"name":"` + strings.Repeat("a", MaxBodyBytes) + `"}`
	manyArgs := make([]string, maxCommandArgs+1)
	for i := range manyArgs {
		manyArgs[i] = "x"
	}
	var (
		apps       = "/v1/apps"
		components = "/v1/apps/" + app.ID + "/components"
		installs   = "/v1/installs"
		commands   = "/v1/installs/" + inst.ID + "/commands"
		windows    = "/v1/installs/" + inst.ID + "/maintenance-windows"
	)
	cases := []struct {
		name         string
		method, path string
		body         any
		status       int
		field        string // "" when the error is about the whole body
		message      string // a part of the message, if it matters
	}{
		{"malformed JSON", "POST", apps, `{"name": "x"`, 400, "", ""},
		{"not JSON", "POST", apps, `name=x`, 400, "", ""},
		{"a list, not an object", "POST", apps, `["demo"]`, 400, "(body)", ""},
		{"two objects", "POST", apps, `{"name":"a"}{"name":"b"}`, 400, "", ""},
		{"unknown field", "POST", apps, `{"name":"x","colour":"red"}`, 400, "colour", ""},
		{"wrong type", "POST", apps, `{"name":5}`, 400, "name", ""},
		{"NUL in a string (no text column stores one)", "POST", apps, `{"name":"x","description":"a\u0000b"}`, 400, "description", "NUL"},
		{"NUL in a label", "POST", installs, `{"app_id":"` + app.ID + `","name":"x","labels":{"env":"a\u0000"}}`, 400, "labels.env", "NUL"},
		{"missing name", "POST", apps, `{"description":"no name"}`, 400, "name", "required"},
		{"empty body", "POST", apps, ``, 400, "name", ""},
		{"invalid name", "POST", apps, `{"name":"Not A Name"}`, 400, "name", ""},
		{"name taken", "POST", apps, `{"name":"demo"}`, 409, "name", "already exists"},
		{"body over the limit", "POST", apps, big, 413, "", ""},
		{"chunked body over the limit", "POST", apps, io.MultiReader(strings.NewReader(big)), 413, "", ""},

		{"unknown component type", "POST", components, `{"name":"x","type":"lambda"}`, 400, "type", ""},
		{"missing dependency", "POST", components, `{"name":"x","type":"helm_chart","dependencies":["nope"]}`, 400, "dependencies[0]", ""},
		{"dependencies not a list", "POST", components, `{"name":"x","type":"helm_chart","dependencies":"db"}`, 400, "dependencies", ""},
		{"config not an object", "POST", components, `{"name":"x","type":"helm_chart","config":[1]}`, 400, "config", ""},
		{"component name taken", "POST", components, `{"name":"db","type":"helm_chart"}`, 409, "name", ""},

		{"install without app", "POST", installs, `{"name":"c2"}`, 400, "app_id", "required"},
		{"install of an unknown app", "POST", installs, `{"app_id":"app_nope","name":"c2"}`, 400, "app_id", ""},
		{"install without name", "POST", installs, `{"app_id":"` + app.ID + `"}`, 400, "name", ""},
		{"input without name", "POST", installs, `{"app_id":"` + app.ID + `","name":"c2","inputs":[{"value":"x"}]}`, 400, "inputs[0].name", ""},
		{"input given twice", "POST", installs, `{"app_id":"` + app.ID + `","name":"c2","inputs":[{"name":"a"},{"name":"a"}]}`, 400, "inputs[1].name", ""},
		{"input value not a string", "POST", installs, `{"app_id":"` + app.ID + `","name":"c2","inputs":[{"name":"a","value":5}]}`, 400, "inputs.value", ""},
		{"input unknown field", "POST", installs, `{"app_id":"` + app.ID + `","name":"c2","inputs":[{"name":"a","secret":true}]}`, 400, "secret", ""},
		{"install name taken", "POST", installs, `{"app_id":"` + app.ID + `","name":"customer-1"}`, 409, "name", ""},

		{"forget on a provision", "POST", "/v1/installs/" + inst.ID + "/provision", `{"forget":true}`, 400, "forget", "only applies to a deprovision"},
		{"forget with plan_only", "POST", "/v1/installs/" + inst.ID + "/deprovision", `{"forget":true,"plan_only":true}`, 400, "forget", "plan_only"},

		{"window with a bad time zone", "PUT", windows, `{"windows":[{"days":["sat"],"start":"02:00","duration":"4h","time_zone":"Mars/Olympus"}]}`, 400, "windows[0].time_zone", "Mars/Olympus"},
		{"window with a bad day", "PUT", windows, `{"windows":[{"days":["someday"],"start":"02:00","duration":"4h","time_zone":"UTC"}]}`, 400, "windows[0].days[0]", ""},
		{"window with a bad start", "PUT", windows, `{"windows":[{"days":["sat"],"start":"2am","duration":"4h","time_zone":"UTC"}]}`, 400, "windows[0].start", ""},
		{"window over a week", "PUT", windows, `{"windows":[{"days":["sat"],"start":"02:00","duration":"200h","time_zone":"UTC"}]}`, 400, "windows[0].duration", "168h"},
		{"window of nothing", "PUT", windows, `{"windows":[{"days":["sat"],"start":"02:00","duration":"0s","time_zone":"UTC"}]}`, 400, "windows[0].duration", ""},

		{"token without name", "POST", "/v1/tokens", `{}`, 400, "name", ""},

		{"command missing", "POST", commands, `{"timeout_seconds":10}`, 400, "command", "required"},
		{"command null", "POST", commands, `{"command":null}`, 400, "command", ""},
		{"command empty", "POST", commands, `{"command":[]}`, 400, "command", ""},
		{"command a string", "POST", commands, `{"command":"rm -rf /"}`, 400, "command", ""},
		{"command of numbers", "POST", commands, `{"command":["sleep",5]}`, 400, "command", ""},
		{"too many arguments", "POST", commands, map[string]any{"command": manyArgs}, 400, "command", "at most 64"},
		{"argument too long", "POST", commands, map[string]any{"command": []string{"echo", strings.Repeat("x", maxCommandArgBytes+1)}}, 400, "command[1]", ""},
		{"empty program", "POST", commands, `{"command":[""]}`, 400, "command[0]", ""},
		{"NUL in an argument", "POST", commands, `{"command":["echo","a\u0000b"]}`, 400, "command[1]", ""},
		{"timeout zero", "POST", commands, `{"command":["ls"],"timeout_seconds":0}`, 400, "timeout_seconds", ""},
		{"timeout too long", "POST", commands, `{"command":["ls"],"timeout_seconds":3601}`, 400, "timeout_seconds", ""},
		{"timeout a string", "POST", commands, `{"command":["ls"],"timeout_seconds":"60"}`, 400, "timeout_seconds", ""},
		{"timeout fractional", "POST", commands, `{"command":["ls"],"timeout_seconds":1.5}`, 400, "timeout_seconds", ""},

		{"wait too long", "GET", commands + "/" + cmd.ID + "?wait=61", nil, 400, "wait", ""},
		{"wait not a number", "GET", commands + "/" + cmd.ID + "?wait=soon", nil, 400, "wait", ""},
		{"command list limit", "GET", commands + "?limit=0", nil, 400, "limit", ""},
		{"job list limit", "GET", "/v1/installs/" + inst.ID + "/jobs?limit=1000", nil, 400, "limit", ""},
		{"log cursor", "GET", "/v1/jobs/" + job.ID + "/logs?after=abc", nil, 400, "after", ""},
		{"log cursor negative", "GET", "/v1/jobs/" + job.ID + "/logs?after=1.-2", nil, 400, "after", ""},
		{"log limit", "GET", "/v1/jobs/" + job.ID + "/logs?limit=0", nil, 400, "limit", ""},
		{"log follow", "GET", "/v1/jobs/" + job.ID + "/logs?follow=maybe", nil, 400, "follow", ""},
	}
	before := e.snapshot()
	started := len(e.ops.startedCommands())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := e.with(t)
			res := e.send(c.method, c.path, e.token, c.body)
			if res.status != c.status {
				t.Fatalf("%s %s: got %s, want %d", c.method, c.path, res, c.status)
			}
			apiErr := res.apiError(t)
			if apiErr.Field != c.field || apiErr.Message == "" || apiErr.Code == "" {
				t.Fatalf("error %+v, want one on field %q with a message", apiErr, c.field)
			}
			if !strings.Contains(apiErr.Message, c.message) {
				t.Fatalf("error message %q does not say %q", apiErr.Message, c.message)
			}
			wantCode := map[int]string{400: protocol.CodeInvalid, 409: protocol.CodeConflict, 413: protocol.CodeTooLarge}[c.status]
			if apiErr.Code != wantCode {
				t.Fatalf("error code %q, want %q", apiErr.Code, wantCode)
			}
			if after := e.snapshot(); !reflect.DeepEqual(before, after) {
				t.Fatalf("a refused request changed stored rows:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
	if n := len(e.ops.startedCommands()); n != started {
		t.Errorf("refused commands started %d workflows", n-started)
	}
}

// TestBadInputMessages: the messages say what to do, not only what failed.
func TestBadInputMessages(t *testing.T) {
	e := newTestEnv(t)
	_, inst := e.fixture()
	res := e.send("POST", "/v1/installs/"+inst.ID+"/commands", e.token, `{"command":["ls"],"timeout_seconds":7200}`)
	if msg := res.apiError(t).Message; !strings.Contains(msg, "7200") || !strings.Contains(msg, "3600") {
		t.Errorf("timeout message %q does not give the value and the limit", msg)
	}
	res = e.send("POST", "/v1/apps", e.token, `{"name":"x","colour":"red"}`)
	if msg := res.apiError(t).Message; !strings.Contains(msg, "colour") {
		t.Errorf("unknown field message %q does not name it", msg)
	}
	var body bytes.Buffer
	json.NewEncoder(&body).Encode(map[string]any{"name": 12})
	res = e.send("POST", "/v1/apps", e.token, body.Bytes())
	if msg := res.apiError(t).Message; !strings.Contains(msg, "string") {
		t.Errorf("wrong type message %q does not say what type is wanted", msg)
	}
}

// TestOversizedBodyIsRefusedBeforeItIsRead: a Content-Length over the limit
// is answered at once, without waiting for (or reading) the body.
func TestOversizedBodyIsRefusedBeforeItIsRead(t *testing.T) {
	e := newTestEnv(t)
	conn, err := net.Dial("tcp", e.http.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/apps HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"name\":\"",
		e.token, 2*MaxBodyBytes)
	// The rest of the body never comes: only an early answer ends the read.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", res.StatusCode)
	}
}
