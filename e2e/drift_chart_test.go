package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/outpost-dev/outpost/contract/status"
)

// A chart's object edited through the API server, behind helm's back, is
// found drifted by the next check, with the plan's diff (a controller's
// annotation is not drift); a deploy of the component puts it back and
// clears the drift. Tearing the install down, the chart's uninstall step
// records when it started and the objects it removed.
func TestDriftOfAChartEditedInTheCluster(t *testing.T) {
	s, inst := provisionedDemo(t, exampleDir, "cust-chart-drift")
	check := s.waitOp(inst, s.startOp(inst, "/drift-check", nil).ID, 3*time.Minute)
	if check.Status != status.OpSucceeded || check.step(t, "web").Status != status.StepNoChanges || check.step(t, "cluster").Status != status.StepNoChanges {
		t.Fatalf("a check of an install as deployed: %s %q %+v", check.Status, check.Error, check.Steps)
	}

	ctx := context.Background()
	cms := s.kube(inst).CoreV1().ConfigMaps("demo")
	cm, err := cms.Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	apiURL := cm.Data["API_URL"]
	cm.Data["API_URL"] = "https://edited.example.com"
	cm.Annotations = map[string]string{"controller.example/seen": "yes"}
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	check = s.waitOp(inst, s.startOp(inst, "/drift-check", nil).ID, 3*time.Minute)
	web := check.step(t, "web")
	if check.Status != status.OpSucceeded || web.Status != status.StepDrifted || web.StartedAt == nil || check.step(t, "api").Status != status.StepNoChanges {
		t.Fatalf("a check after the edit: %s %q %+v", check.Status, check.Error, check.Steps)
	}
	found := s.drift(inst)["web"]
	want := "--- live/ConfigMap/demo/web-config\n+++ b/ConfigMap/demo/web-config\n"
	if !found.Drifted || found.Since == nil || found.OperationID != check.ID || !strings.Contains(found.Plan, want) ||
		!strings.Contains(found.Plan, "-  API_URL: https://edited.example.com\n+  API_URL: "+apiURL+"\n") ||
		strings.Contains(found.Plan, "-    controller.example/seen") {
		t.Fatalf("GET drift of web: %+v", found)
	}
	s.replay(check.WorkflowID)

	deploy := s.waitOp(inst, s.startOp(inst, "/components/web/deploy", nil).ID, 3*time.Minute)
	if st := deploy.step(t, "web"); deploy.Status != status.OpSucceeded || st.Status != status.StepSucceeded || !strings.Contains(st.Plan, want) {
		t.Fatalf("a deploy of web: %s %q %+v", deploy.Status, deploy.Error, deploy.Steps)
	}
	if d := s.drift(inst)["web"]; d.Drifted || d.OperationID != deploy.ID {
		t.Fatalf("drift of web after its deploy: %+v", d)
	}
	cm, err = cms.Get(ctx, "web-config", metav1.GetOptions{})
	if err != nil || cm.Data["API_URL"] != apiURL || cm.Annotations["controller.example/seen"] != "yes" {
		t.Fatalf("ConfigMap after the deploy: %v %v %v", cm.Data, cm.Annotations, err)
	}
	if check = s.waitOp(inst, s.startOp(inst, "/drift-check", nil).ID, 3*time.Minute); check.step(t, "web").Status != status.StepNoChanges {
		t.Fatalf("a check after the deploy: %s %q %+v", check.Status, check.Error, check.Steps)
	}

	down := s.waitOp(inst, s.startOp(inst, "/components/web/teardown", nil).ID, 3*time.Minute)
	if st := down.step(t, "web"); down.Status != status.OpSucceeded || st.StartedAt == nil || st.Remove != 3 {
		t.Fatalf("teardown of web: %s %q %+v", down.Status, down.Error, down.Steps)
	}
}
