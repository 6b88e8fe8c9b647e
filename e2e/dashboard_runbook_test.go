package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/outpost-dev/outpost/api/wire"
)

// A runbook run's page in chromium, with a real runner: started from the
// install page's Run form, the page shows the run waiting at its gate —
// migrate succeeded with its step's Log, deploy_api linking its operation,
// check pending — and Approve gate; approved (after confirming), the run
// moves on without a reload: check succeeds, the run too, and Approve is
// gone.
func TestDashboardRunbookRunPage(t *testing.T) {
	s := newStack(t, stackOptions{})
	inst := s.provisionedRunbookApp()
	marker := filepath.Join(t.TempDir(), "ready")
	if err := os.WriteFile(marker, []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t)
	signIn(b, s)
	b.show("#/installs/" + inst)
	b.text(`[data-runbook="release"]`, "migrate (action) → deploy_api (deploy) → gate (approval) → check (action)", time.Minute)
	b.click("#runbook-run-release")
	b.run(time.Minute, chromedp.SendKeys(chromedp.CSS(`form[data-runbook-form="release"] #input-version`), "v9"),
		chromedp.SendKeys(chromedp.CSS(`form[data-runbook-form="release"] #input-marker`), marker))
	b.click("#runbook-submit-release")

	b.text("#runbook-approve", "Approve gate", 3*time.Minute)
	b.text(`tr[data-runbook-step="gate"]`, "waiting approval", time.Minute)
	b.text(`tr[data-runbook-step="migrate"]`, "succeeded", time.Minute)
	b.text(`tr[data-runbook-step="check"]`, "pending", time.Minute)
	op := b.text(`tr[data-runbook-step="deploy_api"]`, "operation op_", time.Minute)
	if !strings.Contains(op, "succeeded") || !strings.Contains(op, "api") {
		t.Fatalf("the deploy_api row: %q, want it succeeded, deploying api, linking its operation", op)
	}
	b.click(`tr[data-runbook-step="migrate"] button[data-log-job]`)
	b.text(".log-panel .logbox", "migrating to v9", time.Minute)
	b.screenshot("dashboard-runbook-run")

	b.confirmAction("#runbook-approve")
	b.text(`tr[data-runbook-step="check"]`, "succeeded", 2*time.Minute)
	b.text("h1", "succeeded", time.Minute)
	if approved := b.text(`tr[data-runbook-step="gate"]`, "approved by", time.Minute); !strings.Contains(approved, "succeeded") {
		t.Fatalf("the gate's row after approving: %q", approved)
	}
	if eval[bool](b, `!!document.getElementById("runbook-approve")`) {
		t.Fatal("Approve is still shown on a run that has moved past its gate")
	}
	var runs wire.RunbookRunList
	s.do("GET", "/v1/installs/"+inst+"/runbooks/release/runs", nil, &runs)
	if len(runs.Runs) != 1 || runs.Runs[0].Status != "succeeded" || runs.Runs[0].Inputs["version"] != "v9" {
		t.Fatalf("runs of release: %+v, want the one from the page, succeeded", runs.Runs)
	}
}
