package api

import (
	"context"
	"errors"
	"fmt"
	"github.com/outpost-dev/outpost/api/wire"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/store"
)

func TestCommands(t *testing.T) {
	e := newTestEnv(t)
	ctx := context.Background()
	_, inst := e.fixture()
	commands := "/v1/installs/" + inst.ID + "/commands"

	var df wire.Command
	e.call("POST", commands, map[string]any{"command": []string{"df", "-h"}, "timeout_seconds": 30}, 202, &df)
	if !strings.HasPrefix(df.ID, "cmd_") || df.Status != string(status.JobQueued) || !reflect.DeepEqual(df.Command, []string{"df", "-h"}) ||
		df.TimeoutSeconds != 30 || df.WorkflowID != "install/"+inst.ID+"/command/"+df.ID || df.InstallID != inst.ID {
		t.Fatalf("created command = %+v", df)
	}
	started := e.ops.startedCommands()
	if len(started) != 1 || started[0].ID != df.ID || started[0].WorkflowID != df.WorkflowID || started[0].OrgID != e.org.ID ||
		started[0].InstallID != inst.ID || started[0].TimeoutMS != 30_000 || !reflect.DeepEqual(started[0].Args, df.Command) {
		t.Fatalf("workflows started: %+v", started)
	}
	var uptime wire.Command
	e.call("POST", commands, map[string]any{"command": []string{"uptime"}}, 202, &uptime)
	if uptime.TimeoutSeconds != defaultCommandTimeout {
		t.Fatalf("default timeout = %d", uptime.TimeoutSeconds)
	}

	var list struct{ Commands []wire.Command }
	e.call("GET", commands, nil, 200, &list)
	if len(list.Commands) != 2 || list.Commands[0].ID != uptime.ID || list.Commands[1].ID != df.ID {
		t.Fatalf("commands = %+v, want newest first", list.Commands)
	}
	var got wire.Command
	e.call("GET", commands+"/"+df.ID, nil, 200, &got)
	if got.Status != string(status.JobQueued) {
		t.Fatalf("command = %+v", got)
	}

	// ?wait holds the answer until the workflow closes, then reads again.
	go func() {
		select {
		case id := <-e.ops.awaiting:
			now := time.Now()
			code := 0
			if err := e.store.UpdateInstallCommand(ctx, store.InstallCommand{ID: df.ID, Status: status.JobSucceeded,
				ExitCode: &code, Output: "Filesystem  Size\n/dev/sda1  20G\n", FinishedAt: &now}); err != nil {
				t.Error(err)
			}
			e.ops.close(id)
		case <-time.After(30 * time.Second):
			t.Error("the API never awaited the workflow")
		}
	}()
	e.call("GET", commands+"/"+df.ID+"?wait=30", nil, 200, &got)
	if got.Status != string(status.JobSucceeded) || got.ExitCode == nil || *got.ExitCode != 0 || !strings.Contains(got.Output, "/dev/sda1") || got.FinishedAt == nil {
		t.Fatalf("after waiting: %+v", got)
	}
	// A finished command is answered at once: nothing is awaited.
	e.call("GET", commands+"/"+df.ID+"?wait=30", nil, 200, &got)
	select {
	case id := <-e.ops.awaiting:
		t.Fatalf("awaited %s for a finished command", id)
	default:
	}

	// A wait that runs out answers the command as it is.
	e.call("GET", commands+"/"+uptime.ID+"?wait=1", nil, 200, &got)
	if got.Status != string(status.JobQueued) {
		t.Fatalf("after a wait that ran out: %+v", got)
	}
	if id := <-e.ops.awaiting; id != uptime.WorkflowID {
		t.Fatalf("awaited %s, want %s", id, uptime.WorkflowID)
	}

	// Cancel asks the workflow to stop; a finished command cannot be.
	e.call("POST", commands+"/"+uptime.ID+"/cancel", nil, 202, &got)
	if c := e.ops.cancelledWorkflows(); !reflect.DeepEqual(c, []string{uptime.WorkflowID}) {
		t.Fatalf("cancelled %v", c)
	}
	e.call("POST", commands+"/"+df.ID+"/cancel", nil, 409, nil)
	if c := e.ops.cancelledWorkflows(); len(c) != 1 {
		t.Fatalf("cancelled a finished command: %v", c)
	}

	// A command is found only under its own install.
	var other installAnswer
	e.call("POST", "/v1/installs", map[string]any{"app_id": inst.AppID, "name": "customer-2"}, 201, &other)
	e.call("GET", "/v1/installs/"+other.ID+"/commands/"+df.ID, nil, 404, nil)
	e.call("POST", "/v1/installs/"+other.ID+"/commands/"+uptime.ID+"/cancel", nil, 404, nil)
	e.call("GET", "/v1/installs/"+other.ID+"/commands", nil, 200, &list)
	if len(list.Commands) != 0 {
		t.Fatalf("the other install lists %+v", list.Commands)
	}
	e.call("GET", commands+"/cmd_missing", nil, 404, nil)
}

func TestCommandThatCannotStart(t *testing.T) {
	ops := newRecordingOps()
	e := newTestEnvWithOps(t, ops)
	_, inst := e.fixture()
	commands := "/v1/installs/" + inst.ID + "/commands"

	ops.failStarts(errors.New("dial tcp 10.0.0.7:7233: connection refused"))
	res := e.call("POST", commands, map[string]any{"command": []string{"ls"}}, 503, nil)
	if strings.Contains(string(res.body), "10.0.0.7") {
		t.Fatalf("the answer leaks the cause: %s", res)
	}
	var list struct{ Commands []wire.Command }
	e.call("GET", commands, nil, 200, &list)
	if len(list.Commands) != 1 || list.Commands[0].Status != string(status.JobFailed) || list.Commands[0].FinishedAt == nil || list.Commands[0].Error == "" {
		t.Fatalf("a command that did not start is listed as %+v, want failed", list.Commands)
	}

	ops.failStarts(fmt.Errorf("install %s is busy: %w", inst.ID, store.ErrConflict))
	e.call("POST", commands, map[string]any{"command": []string{"ls"}}, 409, nil)
}

func TestCommandsWithoutOperations(t *testing.T) {
	e := newTestEnvWithOps(t, nil)
	_, inst := e.fixture()
	commands := "/v1/installs/" + inst.ID + "/commands"
	cmd, err := e.store.CreateInstallCommand(context.Background(), store.InstallCommand{OrgID: e.org.ID, InstallID: inst.ID,
		Args: []string{"ls"}, TimeoutMS: 1000, WorkflowID: "install/" + inst.ID + "/command/x"})
	if err != nil {
		t.Fatal(err)
	}
	before := e.snapshot()
	e.call("POST", commands, map[string]any{"command": []string{"ls"}}, 503, nil)
	e.call("POST", commands+"/"+cmd.ID+"/cancel", nil, 503, nil)
	e.call("GET", commands+"/"+cmd.ID+"?wait=5", nil, 503, nil)
	if after := e.snapshot(); !reflect.DeepEqual(before, after) {
		t.Fatalf("refused commands changed stored rows")
	}
	// What the store knows is still served.
	e.call("GET", commands+"/"+cmd.ID, nil, 200, nil)
	e.call("GET", commands, nil, 200, nil)
	// Bad input is still named, before the missing service.
	if res := e.send("POST", commands, e.token, `{"command":[]}`); res.status != 400 || res.apiError(t).Field != "command" {
		t.Fatalf("bad command without Operations: %s", res)
	}
}
