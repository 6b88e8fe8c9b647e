package api

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/outpost-dev/outpost/protocol"
)

// What the tests of starting action runs and runbook runs share.

// configEnv is a test env recording what it starts, with the fixture's app
// synced with files, and its install.
func configEnv(t *testing.T, files fstest.MapFS) (*testEnv, installAnswer) {
	e := newTestEnvWithOps(t, newRecordingOps())
	app, inst := e.fixture()
	e.syncConfig(app.ID, files, 201)
	return e, inst
}

// refusedRun is a POST below base that starts no run: the status it is
// answered, the field the error names and a text it says.
type refusedRun struct {
	path, body  string
	want        int
	field, text string
}

// checkRefused posts each request and checks it is refused as it says and
// changes no rows; started is how many runs were started, 0 after all.
func (e *testEnv) checkRefused(t *testing.T, base string, cases []refusedRun, started func() int) {
	t.Helper()
	for _, tc := range cases {
		before := e.snapshot()
		res := e.send("POST", base+tc.path, e.token, tc.body)
		ae := res.apiError(t)
		if res.status != tc.want || ae.Field != tc.field || !strings.Contains(ae.Message, tc.text) {
			t.Errorf("POST %s %s: %s, want %d naming %q, saying %q", tc.path, tc.body, res, tc.want, tc.field, tc.text)
		}
		if d := snapshotDiff(before, e.snapshot()); d != "" {
			t.Errorf("POST %s %s changed rows:\n%s", tc.path, tc.body, d)
		}
	}
	if n := started(); n != 0 {
		t.Errorf("%d runs started", n)
	}
}

// allowOnlyHello makes the install's runner allow action jobs of the
// action hello only.
func (e *testEnv) allowOnlyHello(t *testing.T, inst installAnswer) {
	t.Helper()
	err := e.store.UpdateRunnerCustomer(context.Background(), inst.Runner.ID,
		&protocol.CustomerPolicy{JobTypes: []string{protocol.JobTypeAction}, Actions: []string{"hello"}}, protocol.CustomerState{})
	if err != nil {
		t.Fatal(err)
	}
}
