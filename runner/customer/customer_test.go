package customer

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

func commandJob(args ...string) protocol.Job {
	m, _ := json.Marshal(protocol.CommandManifest{Args: args})
	return protocol.Job{ID: "job_1", Attempt: 1, Type: protocol.JobTypeCommand, Manifest: m}
}

func actionJob(action string) protocol.Job {
	m, _ := json.Marshal(protocol.ActionManifest{Action: action, Step: "one", Script: "true", TimeoutMS: 1000})
	return protocol.Job{ID: "job_2", Attempt: 1, Type: protocol.JobTypeAction, Manifest: m}
}

func TestPolicyRefusesWhatTheCustomerDidNotAllow(t *testing.T) {
	deprovision := protocol.Job{Type: protocol.JobTypeTerraform, Manifest: []byte(`{}`),
		Origin: &protocol.JobOrigin{OperationKind: protocol.ConsentDeprovision}}
	consent := []protocol.Consent{{Kind: protocol.ConsentDeprovision, Until: time.Now().Add(time.Hour)}}
	for _, tc := range []struct {
		name     string
		p        Policy
		job      protocol.Job
		consents []protocol.Consent
		want     string // "" runs
	}{
		{"debug commands off by default", Policy{}, commandJob("id"), nil, "does not allow debug commands"},
		{"debug commands allowed", Policy{DebugCommands: true}, commandJob("id"), nil, ""},
		{"a program off the allow-list", Policy{DebugCommands: true, DebugPrograms: []string{"df", "/usr/bin/kubectl"}}, commandJob("sh", "-c", "id"), nil, `does not allow the program "sh"`},
		{"a program on it by name", Policy{DebugCommands: true, DebugPrograms: []string{"df", "/usr/bin/kubectl"}}, commandJob("kubectl", "get", "pods"), nil, ""},
		{"a job type left out", Policy{JobTypes: []string{"helm"}}, protocol.Job{Type: protocol.JobTypeTerraform}, nil, "does not allow terraform jobs"},
		{"actions run by default", Policy{}, actionJob("migrate"), nil, ""},
		{"an action off the allow-list", Policy{Actions: []string{"warm_cache", "check"}}, actionJob("migrate"), nil, `does not allow action "migrate" (allowed: check, warm_cache)`},
		{"an action on it", Policy{Actions: []string{"warm_cache", "migrate"}}, actionJob("migrate"), nil, ""},
		{"job types leave actions out", Policy{JobTypes: []string{"helm"}}, actionJob("migrate"), nil, `does not allow action "migrate": it runs no action jobs`},
		{"an action job naming no action", Policy{}, actionJob(""), nil, "names no action"},
		{"destroy denied", Policy{Destroy: protocol.DestroyDeny}, deprovision, consent, "does not allow deprovision"},
		{"destroy without consent", Policy{Destroy: protocol.DestroyConsent}, deprovision, nil, "needs the customer's consent for deprovision"},
		{"destroy with consent", Policy{Destroy: protocol.DestroyConsent}, deprovision, consent, ""},
		{"destroy allowed by default", Policy{}, deprovision, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.CheckJob(tc.job, tc.consents)
			if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckJob = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPolicyReportDigestFollowsThePolicy(t *testing.T) {
	can := []string{"command", "helm", "noop", "terraform"}
	off, on := Policy{}.Report(can), Policy{DebugCommands: true}.Report(can)
	if strings.Join(off.JobTypes, ",") != "helm,noop,terraform" || off.Destroy != protocol.DestroyAllow {
		t.Fatalf("default report %+v: want every type but command, destroy allowed", off)
	}
	if off.Digest == on.Digest || !strings.HasPrefix(off.Digest, "sha256:") || off.Digest != (Policy{}).Report(can).Digest {
		t.Fatalf("digests %s %s: want stable, and different for different policies", off.Digest, on.Digest)
	}
	if err := (Policy{Destroy: "maybe"}).Check(); err == nil || !strings.Contains(err.Error(), "--destroy") {
		t.Fatalf("Check of a bad destroy = %v, want it to name --destroy", err)
	}
	can = append(can, protocol.JobTypeAction)
	some := Policy{Actions: []string{"warm", "migrate"}}.Report(can)
	if strings.Join(some.Actions, ",") != "migrate,warm" || some.Digest == (Policy{}).Report(can).Digest || some.Digest != (Policy{Actions: []string{"migrate", "warm"}}).Report(can).Digest {
		t.Fatalf("report %+v: want the actions sorted, in the digest, in any order given", some)
	}
	if !slices.Contains((Policy{}).Report(can).JobTypes, protocol.JobTypeAction) {
		t.Fatal("action jobs are not run by default")
	}
	for p, want := range map[*Policy]string{
		{JobTypes: []string{"helm"}, Actions: []string{"migrate"}}: "--actions needs the job type action",
		{Actions: []string{"migrate", " "}}:                        "--actions: an empty action name",
	} {
		if err := p.Check(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check of %+v = %v, want %q", *p, err, want)
		}
	}
}

func TestPauseConsentAndHistoryOnDisk(t *testing.T) {
	st := State{Dir: t.TempDir()}
	since, err := st.Pause("freeze")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := st.Pause("again"); !again.Equal(since) {
		t.Fatalf("a second pause moved since from %s to %s", since, again)
	}
	if rep, _ := st.Report(); rep.PausedSince == nil {
		t.Fatal("report does not say paused")
	}
	if was, err := st.Resume(); !was || err != nil {
		t.Fatalf("resume = %v %v", was, err)
	}
	if _, err := st.Consent("everything", time.Hour); err == nil {
		t.Fatal("a consent to an unknown kind was taken")
	}
	if _, err := st.Consent(protocol.ConsentTeardown, time.Hour); err != nil {
		t.Fatal(err)
	}
	if cs, _ := st.Consents(time.Now().Add(2 * time.Hour)); len(cs) != 0 {
		t.Fatalf("consents %v after they ended", cs)
	}

	h := st.OpenHistory(0)
	old := NewEntry(commandJob("id"))
	old.At, old.Status = time.Now().Add(-100*24*time.Hour), "succeeded"
	if err := h.Append(old); err != nil {
		t.Fatal(err)
	}
	e := NewEntry(commandJob("df", "-h"))
	e.Status = "succeeded"
	if err := h.Append(e); err != nil {
		t.Fatal(err)
	}
	got, err := h.Read(time.Now().Add(-200 * 24 * time.Hour))
	if err != nil || len(got) != 1 || strings.Join(got[0].Command, " ") != "df -h" || !strings.HasPrefix(got[0].ManifestDigest, "sha256:") {
		t.Fatalf("history %+v %v: want only the recent entry (the 100-day-old day file pruned)", got, err)
	}
	files, _ := filepath.Glob(filepath.Join(st.Dir, "history", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("history files %v: want one", files)
	}
	if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o600 {
		t.Fatalf("history file mode %v, want 0600", fi.Mode().Perm())
	}
}
