package protocol

import (
	"strings"
	"testing"
)

func TestOfflineFilesNameTheWrongField(t *testing.T) {
	good := OfflineResult{Format: OfflineResultFormat, InstallID: "ins_1", ConfigVersion: 2, Status: "succeeded",
		Steps: []OfflineStep{{Name: "sandbox", Status: "succeeded"}}}
	if err := good.Check(); err != nil {
		t.Fatalf("a good result: %v", err)
	}
	bad := good
	bad.Steps = []OfflineStep{{Name: "sandbox", Status: "running"}}
	if err := bad.Check(); err == nil || !strings.HasPrefix(err.Error(), "steps[0].status") {
		t.Errorf("a running step: %v, want steps[0].status", err)
	}
	bad = good
	bad.ConfigVersion = 0
	if err := bad.Check(); err == nil || !strings.HasPrefix(err.Error(), "config_version") {
		t.Errorf("no config version: %v", err)
	}
	inst := OfflineInstall{Format: OfflineInstallFormat, InstallID: "ins_1"}
	if err := inst.Check(); err == nil || !strings.HasPrefix(err.Error(), "app_id") {
		t.Errorf("an install file without app: %v", err)
	}
}
