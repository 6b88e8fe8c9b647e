package contract

// Workflow IDs are readable and deterministic: a second start of the same
// work is refused or joined rather than run twice, and the Temporal UI
// names what each workflow does. Registry subjects (a job's credential:
// "install/<id>", "build/<id>") are not workflow IDs.

// OperationWorkflowID is the ID of an install operation's workflow, e.g.
// "install/ins_123/provision" or "install/ins_123/deploy_component/db". One
// per install and kind; the store's install lock keeps two mutating
// operations of any kind from running at once.
func OperationWorkflowID(installID, kind, component string) string {
	if component != "" {
		return installPrefix(installID) + kind + "/" + component
	}
	return installPrefix(installID) + kind
}

// BuildWorkflowID is the ID of a build's workflow, e.g.
// "app/app_123/build/bld_456".
func BuildWorkflowID(appID, buildID string) string { return appPrefix(appID) + "build/" + buildID }

// ReleaseWorkflowID is the ID of a release's workflow, e.g.
// "app/app_123/release/rel_456".
func ReleaseWorkflowID(appID, releaseID string) string {
	return appPrefix(appID) + "release/" + releaseID
}

// RunnerUpdateWorkflowID is the ID of the workflow that updates an
// install's runner: one at a time per install (a second start is refused).
func RunnerUpdateWorkflowID(installID string) string {
	return installPrefix(installID) + "runner-update"
}

// InstallCommandWorkflowID is the ID of the workflow that runs a debug
// command.
func InstallCommandWorkflowID(installID, commandID string) string {
	return installPrefix(installID) + "command/" + commandID
}

// SupportBundleWorkflowID is the ID of the workflow that collects a
// support bundle.
func SupportBundleWorkflowID(installID, bundleID string) string {
	return installPrefix(installID) + "support-bundle/" + bundleID
}

// KubeLogsWorkflowID is the ID of the workflow of a logs request.
func KubeLogsWorkflowID(installID, requestID string) string {
	return installPrefix(installID) + "logs/" + requestID
}

// KubeLogsJobKey is the key of the job a logs request's workflow queues:
// the API finds the job by it.
func KubeLogsJobKey(workflowID string) string { return workflowID + "/job" }

// DriftScheduleID is the ID of the Temporal schedule of an install's drift
// checks (each check's workflow is OperationWorkflowID(install,
// OpDriftCheck, "")).
func DriftScheduleID(installID string) string { return installPrefix(installID) + "drift" }

func installPrefix(installID string) string { return "install/" + installID + "/" }

func appPrefix(appID string) string { return "app/" + appID + "/" }
