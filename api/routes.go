package api

import (
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"

	"github.com/outpost-dev/outpost/api/wire"
)

// route is one /v1 route: where it is, what serves it, and how the OpenAPI
// document describes it.
type route struct {
	method  string
	path    string // below /v1, in echo's syntax (":id")
	handler echo.HandlerFunc
	doc     operation
}

func (r route) bodyLimit() int64 {
	if r.doc.maxBody > 0 {
		return r.doc.maxBody
	}
	return MaxBodyBytes
}

// operation documents a route.
type operation struct {
	id, tag, summary string
	description      string
	public           bool // no API token needed
	audited          bool // a GET recorded in the audit log (every other method is)
	need             perm // the permission a non-public route needs (authz.go)
	query            []queryParam
	body             any         // the request body: a wire type's zero value, or a rawBody; nil when it takes none
	bodyTypes        []string    // its media types; nil means application/json
	maxBody          int64       // the largest body it reads; 0 means MaxBodyBytes
	status           int         // the success status
	result           any         // the success body: a wire type's zero value, or a rawBody; nil when there is none
	resultType       string      // its media type; "" means application/json
	events           bool        // may answer text/event-stream instead
	streamed         bool        // written as it is read, too large to hold: no ETag (which digests the whole answer)
	errors           []int       // statuses beyond those every route of its kind has
	errorBodies      map[int]any // error bodies other than wire.Error, by status
	otherResults     map[int]any // other success statuses, with their bodies
}

type queryParam struct {
	name, typ, description string
}

var limitParam = queryParam{"limit", "integer", "how many to return, newest first (1-200, default 50)"}

// routeTable lists every /v1 route.
func (s *Server) routeTable() []route {
	const get, post, put, patch, del = http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete
	return []route{
		{get, "/openapi.json", s.serveOpenAPI, operation{id: "getOpenAPI", tag: "meta", public: true,
			summary: "This document", status: 200, result: wire.OpenAPIDocument{}}},

		{get, "/org", s.getOrg, operation{need: permRead, id: "getOrg", tag: "tokens",
			summary: "The org of the request's API token", status: 200, result: wire.Org{}}},
		{post, "/tokens", s.createToken, operation{need: permSelf, id: "createToken", tag: "tokens",
			summary: "Create an API token", description: "The token is in the answer, and only there.",
			body: wire.CreateTokenRequest{}, status: 201, result: wire.NewToken{}}},
		{get, "/tokens", s.listTokens, operation{need: permSelf, id: "listTokens", tag: "tokens",
			summary: "List the org's API tokens (never their values)", status: 200, result: wire.TokenList{}}},
		{del, "/tokens/:id", s.revokeToken, operation{need: permSelf, id: "revokeToken", tag: "tokens",
			summary: "Revoke an API token", status: 204}},

		{get, "/me", s.getMe, operation{need: permSelf, id: "getMe", tag: "users",
			summary: "Who the request's credential stands for: the org, the user and its roles, the token's scopes",
			status:  200, result: wire.Me{}}},
		{post, "/users", s.createUser, operation{need: permAdmin, id: "createUser", tag: "users",
			summary: "Add a user or service account to the org",
			description: "A bad role, an app not of the org or a short password is 400 naming it (roles[i].role, roles[i].app_id, " +
				"password); a name taken, 409.",
			body: wire.CreateUserRequest{}, status: 201, result: wire.User{}, errors: []int{409}}},
		{get, "/users", s.listUsers, operation{need: permAdmin, id: "listUsers", tag: "users",
			summary: "List the org's users and service accounts, with their roles", status: 200, result: wire.UserList{}}},
		{get, "/users/:id", s.getUser, operation{need: permAdmin, id: "getUser", tag: "users",
			summary: "Get a user", status: 200, result: wire.User{}}},
		{put, "/users/:id/roles", s.setUserRoles, operation{need: permAdmin, id: "setUserRoles", tag: "users",
			summary: "Replace a user's roles", description: "Takes effect at once on this replica, within 10 seconds on the others.",
			body: wire.SetRolesRequest{}, status: 200, result: wire.User{}}},
		{del, "/users/:id", s.disableUser, operation{need: permAdmin, id: "disableUser", tag: "users",
			summary: "Disable a user: its sessions and API tokens stop working", status: 204}},

		{get, "/settings/oidc", s.getOIDC, operation{need: permAdmin, id: "getOIDCSettings", tag: "users",
			summary: "The org's single sign-on (OpenID Connect) settings, without the client secret", status: 200,
			result: wire.OIDCSettings{}}},
		{put, "/settings/oidc", s.putOIDC, operation{need: permAdmin, id: "setOIDCSettings", tag: "users",
			summary: "Set the org's single sign-on: the OpenID provider, its client and the roles each group gives",
			description: "A bad URL, role or app is 400 naming it (issuer, redirect_url, groups.<group>.roles[i].role); " +
				"the client secret is sealed at rest and never shown; left out, the stored one is kept.",
			body: wire.OIDCSettings{}, status: 200, result: wire.OIDCSettings{}}},
		{del, "/settings/oidc", s.deleteOIDC, operation{need: permAdmin, id: "deleteOIDCSettings", tag: "users",
			summary: "Turn the org's single sign-on off (sessions already started go on)", status: 204}},

		{get, "/settings/release-key", s.getReleaseKey, operation{need: permRead, id: "getReleaseKey", tag: "configs",
			summary: "The org's release public key: what customers trust to verify its release bundles",
			description: "Only the public key; the private key is sealed at rest and never leaves the control plane. 404 before " +
				"the org has one (POST makes it; so does the first bundle export).",
			status: 200, result: wire.ReleaseKey{}}},
		{post, "/settings/release-key", s.createReleaseKey, operation{need: permAdmin, id: "createReleaseKey", tag: "configs",
			summary:     "Make the org's release key (ed25519) unless it has one",
			description: "Answers the public key, made now or before: there is one key per org, never replaced.",
			status:      200, result: wire.ReleaseKey{}}},

		{get, "/audit", s.listAudit, operation{need: permRead, id: "listAuditEvents", tag: "audit",
			summary: "The org's audit log, newest first: every changing call, refused ones too",
			description: "Each call other than a GET is recorded once answered: who (the API token's ID and name, and whether it " +
				"came as a bearer or the dashboard's session), what (method, route pattern, operationId as action, the objects " +
				"its path named and those it made), when, and the answer's status with a failure's error code. A refused call " +
				"is recorded under the org of the token it carried (a revoked one too); one with no API token is not. Never a " +
				"request body. A page is full at limit; next_before continues it. A bad since, action or before is 400 naming it.",
			query: auditQuery, status: 200, result: wire.AuditEventList{}}},

		{post, "/apps", s.createApp, operation{need: permOperate, id: "createApp", tag: "apps",
			summary: "Create an app", body: wire.CreateAppRequest{}, status: 201, result: wire.App{}, errors: []int{409}}},
		{get, "/apps", s.listApps, operation{need: permRead, id: "listApps", tag: "apps",
			summary: "List apps", status: 200, result: wire.AppList{}}},
		{get, "/apps/:id", s.getApp, operation{need: permRead, id: "getApp", tag: "apps",
			summary: "Get an app", status: 200, result: wire.App{}}},
		{del, "/apps/:id", s.deleteApp, operation{need: permOperate, id: "deleteApp", tag: "apps",
			summary: "Delete an app and its components", description: "An app that still has installs is not deleted (409).",
			status: 204, errors: []int{409}}},

		{put, "/apps/:id/four-eyes", s.setFourEyes, operation{need: permAdmin, id: "setAppFourEyes", tag: "apps",
			summary: "Require that the user who started an operation cannot approve its plans",
			body:    wire.FourEyes{}, status: 200, result: wire.App{}}},

		{post, "/apps/:id/components", s.createComponent, operation{need: permOperate, id: "createComponent", tag: "components",
			summary: "Add a component to an app", description: "Dependencies name components of the same app that already exist.",
			body: wire.CreateComponentRequest{}, status: 201, result: wire.Component{}, errors: []int{409}}},
		{get, "/apps/:id/components", s.listComponents, operation{need: permRead, id: "listComponents", tag: "components",
			summary: "List an app's components", status: 200, result: wire.ComponentList{}}},
		{get, "/components/:id", s.getComponent, operation{need: permRead, id: "getComponent", tag: "components",
			summary: "Get a component", status: 200, result: wire.Component{}}},
		{del, "/components/:id", s.deleteComponent, operation{need: permOperate, id: "deleteComponent", tag: "components",
			summary: "Delete a component", description: "A component another one depends on is not deleted (409).",
			status: 204, errors: []int{409}}},

		{post, "/apps/:id/configs", s.syncConfig, operation{need: permOperate, id: "syncAppConfig", tag: "configs",
			summary: "Sync an app config",
			description: "The body is the config directory (docs/APP_CONFIG.md): a gzipped tar, or multipart/form-data with one part " +
				"per file named by its path. A valid config becomes the app's next version and the app's components are made to " +
				"match it (201; 200 with created=false when it is the latest version already). An invalid one answers 422 with " +
				"every problem, each naming its file and key, and changes nothing. " +
				"Each component that has a build (terraform_module, helm_chart, container_image, docker_build) gets a build of its source: " +
				"one that succeeded or is under way is reused (also one an earlier version made, when the component did not change), " +
				"otherwise one is queued and its workflow started; `builds` lists them. If a build's workflow cannot be started " +
				"the build is marked failed and the answer is 503 (the config version stays stored; sync again to retry).",
			body: configArchive, bodyTypes: append(slices.Clone(configArchiveTypes), "multipart/form-data"),
			maxBody: MaxConfigBytes, status: 201, result: wire.SyncedAppConfig{}, errors: []int{409, 415, 422, 503},
			errorBodies: map[int]any{422: wire.InvalidConfig{}}}},
		{get, "/apps/:id/configs", s.listConfigs, operation{need: permRead, id: "listAppConfigs", tag: "configs",
			summary: "List an app's config versions, newest first", status: 200, result: wire.AppConfigList{}}},
		{get, "/apps/:id/configs/:version", s.getConfig, operation{need: permRead, id: "getAppConfig", tag: "configs",
			summary: "Get a config version (a number, or latest)", status: 200, result: wire.AppConfig{}, errors: []int{400}}},

		{get, "/apps/:id/configs/:version/bundle", s.exportBundle, operation{need: permOperate, id: "exportReleaseBundle", tag: "configs",
			summary: "Export a config version's signed release bundle (an OCI image layout as a tar)",
			description: "Every artifact of the version's builds, copied by digest from the vendor registry, the config version " +
				"itself and an index listing them, signed by the org's release key (made on first use): docs/bundles.md. " +
				"Verified offline with outpost-runner offline verify. Every component with a build must have a succeeded " +
				"build (409 naming the first that has not); 503 when this API process reaches no vendor registry. The " +
				"Outpost-Bundle-Index header is the signed index's digest.",
			status: 200, result: releaseBundleArchive, resultType: "application/x-tar", errors: []int{400, 409, 503}, streamed: true}},
		{get, "/apps/:id/builds", s.listBuilds, operation{need: permRead, id: "listBuilds", tag: "builds",
			summary: "List an app's builds, newest first",
			description: "With config_version: the builds that version uses instead, one per component that has a build, in the " +
				"config's order — some made for an earlier version whose component had the same source. A component whose " +
				"builds all failed shows its latest failed build; one never built is left out.",
			query: []queryParam{
				{"component", "string", "only the builds of this component"},
				{"config_version", "string", "a config version (1, 2, …, or latest): the builds it uses"},
			},
			status: 200, result: wire.BuildList{}}},
		{get, "/apps/:id/builds/:build_id", s.getBuild, operation{need: permRead, id: "getBuild", tag: "builds",
			summary: "Get a build and its artifact", status: 200, result: wire.Build{}}},
		{post, "/apps/:id/builds", s.rebuild, operation{need: permOperate, id: "rebuild", tag: "builds",
			summary: "Build a component of the latest config version",
			description: "A build of the component's current source that succeeded or is under way is answered as it is (200) and " +
				"not rebuilt; otherwise (no build, or only failed ones) a build is queued and its workflow started (202). " +
				"A component the latest config lacks, or one without a build, is 422.",
			body: wire.RebuildRequest{}, status: 202, result: wire.Build{}, otherResults: map[int]any{200: wire.Build{}},
			errors: []int{409, 422, 503}}},

		{post, "/installs", s.createInstall, operation{need: permOperate, id: "createInstall", tag: "installs",
			summary:     "Create an install and its runner",
			description: "The answer holds the runner's one-time registration token; it is never shown again (rotate it to get a new one).",
			body:        wire.CreateInstallRequest{}, status: 201, result: wire.NewInstall{}, errors: []int{409}}},
		{get, "/installs", s.listInstalls, operation{need: permRead, id: "listInstalls", tag: "installs",
			summary: "List installs", query: []queryParam{{"app_id", "string", "only the installs of this app"}},
			status: 200, result: wire.InstallList{}}},
		{get, "/installs/:id", s.getInstall, operation{need: permRead, id: "getInstall", tag: "installs",
			summary: "Get an install", status: 200, result: wire.Install{}}},
		{get, "/installs/:id/health", s.getInstallHealth, operation{need: permRead, id: "getInstallHealth", tag: "installs",
			summary:     "Get an install's health",
			description: "The worst of its helm components' health as its runner reads it, each component's, and their latest transitions (newest first); unknown while the runner is offline.",
			status:      200, result: wire.InstallHealth{}}},
		{del, "/installs/:id", s.deleteInstall, operation{need: permOperate, id: "deleteInstall", tag: "installs",
			summary: "Delete an install and its runner", description: "The runner's tokens stop working at once; jobs and logs are kept.",
			status: 204}},
		{patch, "/installs/:id/labels", s.patchLabels, operation{need: permOperate, id: "patchInstallLabels", tag: "installs",
			summary: "Set and remove some of the install's labels",
			description: "Labels select installs in a release (installs.selector). Kubernetes label syntax: a bad key or value is a 400 " +
				"naming it (field set.<key>); removing a label the install does not have, 400 on remove[i].",
			body: wire.PatchLabelsRequest{}, status: 200, result: wire.Install{}}},
		{put, "/installs/:id/labels", s.putLabels, operation{need: permOperate, id: "putInstallLabels", tag: "installs",
			summary: "Replace the install's labels", description: "A bad key or value is a 400 naming it (field labels.<key>).",
			body: wire.PutLabelsRequest{}, status: 200, result: wire.Install{}}},
		{patch, "/installs/:id/inputs", s.patchInputs, operation{need: permOperate, id: "patchInstallInputs", tag: "installs",
			summary: "Set, change or remove some of the install's inputs",
			description: "Checked against the inputs the app's latest config declares: a value of the wrong type, an undeclared " +
				"input or a required one removed is a 422 naming it (field set[i].value, set[i].name or remove[i]), and nothing " +
				"changes. An accepted change that changes something is the install's next inputs version (it records the names, " +
				"never the values); sensitive values are never shown (an input the config declares sensitive is stored so). " +
				"Nothing is deployed unless apply is set: then the update_inputs operation starts with the change (operation); " +
				"while any operation runs the inputs cannot change (409).",
			body: wire.UpdateInputsRequest{}, status: 200, result: wire.UpdatedInputs{}, errors: []int{409, 422, 503}}},
		{get, "/installs/:id/inputs/versions", s.listInputVersions, operation{need: permRead, id: "listInputVersions", tag: "installs",
			summary: "List the install's inputs versions, newest first (the names each changed, never the values)",
			status:  200, result: wire.InputVersionList{}}},
		{get, "/installs/:id/runner/helm-install", s.runnerHelmInstall, operation{need: permRead, id: "getRunnerHelmInstall", tag: "installs",
			summary: "The helm install command of the install's runner", description: runnerHelmInstallDescription,
			query: runnerHelmInstallQuery, status: 200, result: wire.RunnerHelmInstall{}, errors: []int{409}}},
		{get, "/installs/:id/jobs", s.listInstallJobs, operation{need: permRead, id: "listInstallJobs", tag: "jobs",
			summary: "List an install's jobs", query: []queryParam{limitParam}, status: 200, result: wire.JobList{}}},

		{get, "/runners", s.listRunners, operation{need: permRead, id: "listRunners", tag: "runners",
			summary: "List runners", description: "The org's build runner is created on first use.",
			status: 200, result: wire.RunnerList{}}},
		{get, "/runners/:id", s.getRunner, operation{need: permRead, id: "getRunner", tag: "runners",
			summary: "Get a runner", status: 200, result: wire.Runner{}}},
		{post, "/runners/:id/registration-token", s.rotateRegistrationToken, operation{need: permAdmin, id: "rotateRegistrationToken", tag: "runners",
			summary:     "Issue a new one-time registration token",
			description: "The previous registration token stops working; tokens the runner already holds stay valid.",
			status:      200, result: wire.RegistrationToken{}}},
		{post, "/runners/:id/revoke-tokens", s.revokeRunnerTokens, operation{need: permAdmin, id: "revokeRunnerTokens", tag: "runners",
			summary: "Revoke every access token of a runner", status: 204}},
		{get, "/runner-versions", s.listRunnerVersions, operation{need: permRead, id: "listRunnerVersions", tag: "runners",
			summary: "List the published runner versions (outpost runner publish), newest first", status: 200, result: wire.RunnerVersionList{}}},
		{put, "/runner-policy", s.putOrgRunnerPolicy, operation{need: permAdmin, id: "putOrgRunnerPolicy", tag: "runners",
			summary:     "Set the runner version the org's installs should run",
			description: "An unpublished version is a 422 naming version. Installs follow it unless they have a version of their own or are pinned.",
			body:        wire.RunnerPolicyRequest{}, status: 200, result: wire.RunnerPolicy{}, errors: []int{422}}},
		{get, "/installs/:id/runner-policy", s.getInstallRunnerPolicy, operation{need: permRead, id: "getInstallRunnerPolicy", tag: "runners",
			summary: "The install's runner version policy and target", status: 200, result: wire.RunnerPolicy{}}},
		{put, "/installs/:id/runner-policy", s.putInstallRunnerPolicy, operation{need: permAdmin, id: "putInstallRunnerPolicy", tag: "runners",
			summary:     "Override the org's runner version for the install, or pin its runner",
			description: "Fields left out keep their value. A pinned install's runner is not updated.",
			body:        wire.RunnerPolicyRequest{}, status: 200, result: wire.RunnerPolicy{}, errors: []int{422}}},
		{post, "/installs/:id/runner-updates", s.createRunnerUpdate, operation{need: permOperate, id: "createRunnerUpdate", tag: "runners",
			summary: "Update the install's runner",
			description: "Starts the update workflow: the runner copies the binary into the install's registry, stages it, hands over " +
				"to it and the new runner must run a health job within the deadline, or the old one rolls back. A pinned install " +
				"or an update already under way is a 409; no version (given or wanted) or an unpublished one a 422.",
			body: wire.CreateRunnerUpdateRequest{}, status: 202, result: wire.RunnerUpdate{}, errors: []int{409, 422, 503}}},
		{get, "/installs/:id/runner-updates/:uid", s.getRunnerUpdate, operation{need: permRead, id: "getRunnerUpdate", tag: "runners",
			summary: "Get a runner update", status: 200, result: wire.RunnerUpdate{}}},

		{get, "/jobs/:id", s.getJob, operation{need: permRead, id: "getJob", tag: "jobs",
			summary: "Get a job with its attempts and status history", status: 200, result: wire.JobDetail{}}},
		{get, "/jobs/:id/logs", s.jobLogs, operation{need: permRead, id: "getJobLogs", tag: "jobs",
			summary: "Read or follow a job's logs",
			description: "Without follow: a page of chunks after the cursor and the cursor to continue from. " +
				"With follow=true: Server-Sent Events, one `log` event per chunk (data: a LogChunk, id: its cursor) " +
				"and a final `end` event (data: a LogEnd) once the job is finished and every line was sent. " +
				"A stream lasts at most the server's follow maximum (default 30 minutes): then a `resume` event " +
				"(data: {\"after\": cursor}) ends it, and the client reconnects with after= or Last-Event-ID to go on.",
			query: []queryParam{
				{"after", "string", "cursor <attempt>.<seq>: return the chunks after it (default: from the start)"},
				{"limit", "integer", "chunks per page (1-1000, default 200); ignored with follow"},
				{"follow", "boolean", "stream the logs as Server-Sent Events until the job finishes"},
			},
			status: 200, result: wire.LogPage{}, events: true}},

		{post, "/installs/:id/commands", s.createCommand, operation{need: permExec, id: "createCommand", tag: "commands",
			summary:     "Run a debug command on the install's runner",
			description: "Starts the workflow install/<install id>/command/<command id> and answers at once; poll or wait on the command.",
			body:        wire.CreateCommandRequest{}, status: 202, result: wire.Command{}, errors: []int{409, 503}}},
		{get, "/installs/:id/actions", s.listActions, operation{need: permRead, id: "listActions", tag: "actions",
			summary: "List the actions of the install's config version", status: 200, result: wire.ActionList{}, errors: []int{409}}},
		{post, "/installs/:id/actions/:action/runs", s.runAction, operation{need: permExec, id: "runAction", tag: "actions",
			summary: "Run an action on the install's runner",
			description: "Records the run and starts the workflow install/<install id>/action/<action>/<run id>, which runs the steps " +
				"one job at a time. 400 names a bad input (inputs.<name>); 404: the config has no such action; 409: the action " +
				"has no manual trigger, or the install's runner does not allow it.",
			body: wire.RunActionRequest{}, status: 201, result: wire.ActionRun{}, errors: []int{409, 503}}},
		{get, "/installs/:id/actions/:action/runs", s.listActionRuns, operation{need: permRead, id: "listActionRuns", tag: "actions",
			summary: "List the runs of an install's action, newest first", query: []queryParam{limitParam}, status: 200,
			result: wire.ActionRunList{}}},
		{get, "/installs/:id/action-runs/:run", s.getActionRun, operation{need: permRead, id: "getActionRun", tag: "actions",
			summary:     "Get an action run with its steps",
			description: "Each step names its job: follow its log with the job-logs route. Sensitive inputs and outputs show as (sensitive).",
			status:      200, result: wire.ActionRun{}}},
		{post, "/installs/:id/action-runs/:run/cancel", s.cancelActionRun, operation{need: permExec, id: "cancelActionRun", tag: "actions",
			summary: "Cancel an action run",
			description: "Cancels the run's workflow: its running step's job is cancelled (the runner stops its process: SIGTERM, " +
				"then SIGKILL), the steps after it are skipped, and the run ends cancelled. Answers at once (poll the run); one " +
				"that has already finished is 409.",
			status: 202, result: wire.ActionRun{}, errors: []int{409, 503}}},
		{get, "/installs/:id/runbooks", s.listRunbooks, operation{need: permRead, id: "listRunbooks", tag: "runbooks",
			summary: "List the runbooks of the install's config version", status: 200, result: wire.RunbookList{}, errors: []int{409}}},
		{post, "/installs/:id/runbooks/:runbook/runs", s.runRunbook, operation{need: permOperate, id: "runRunbook", tag: "runbooks",
			summary: "Run a runbook on the install",
			description: "Records the run and starts the workflow install/<install id>/runbook/<runbook>/<run id>, which runs the steps " +
				"in order. 400 names a bad input (inputs.<name>); 404: the config has no such runbook; 409: the install's runner " +
				"does not allow a step.",
			body: wire.RunRunbookRequest{}, status: 201, result: wire.RunbookRun{}, errors: []int{409, 503}}},
		{get, "/installs/:id/runbooks/:runbook/runs", s.listRunbookRuns, operation{need: permRead, id: "listRunbookRuns", tag: "runbooks",
			summary: "List the runs of an install's runbook, newest first", query: []queryParam{limitParam}, status: 200,
			result: wire.RunbookRunList{}}},
		{get, "/installs/:id/runbook-runs/:runbook_run", s.getRunbookRun, operation{need: permRead, id: "getRunbookRun", tag: "runbooks",
			summary:     "Get a runbook run with its steps",
			description: "Each step names its action run or operation: follow their steps' logs there. Sensitive inputs show as (sensitive).",
			status:      200, result: wire.RunbookRun{}}},
		{post, "/installs/:id/runbook-runs/:runbook_run/approve", s.approveRunbookRun, operation{need: permApprove, id: "approveRunbookRun",
			tag: "runbooks", summary: "Approve the gate a runbook run waits at", description: "409 when the run waits at no gate.",
			status: 202, result: wire.RunbookRun{}, errors: []int{409, 503}}},
		{post, "/installs/:id/runbook-runs/:runbook_run/resume", s.resumeRunbookRun, operation{need: permOperate, id: "resumeRunbookRun",
			tag: "runbooks", summary: "Resume a failed runbook run from its failed step",
			description: "Steps that succeeded are not run again. 409 when the run has not failed or been cancelled.",
			status:      202, result: wire.RunbookRun{}, errors: []int{409, 503}}},
		{get, "/installs/:id/commands", s.listCommands, operation{need: permRead, id: "listCommands", tag: "commands",
			summary: "List an install's commands", query: []queryParam{limitParam}, status: 200, result: wire.CommandList{}}},
		{get, "/installs/:id/commands/:cmd", s.getCommand, operation{need: permRead, id: "getCommand", tag: "commands",
			summary: "Get a command",
			query: []queryParam{{"wait", "integer",
				"if the command has not finished, wait up to this many seconds (0-60) for it to finish before answering"}},
			status: 200, result: wire.Command{}, errors: []int{503}}},
		{post, "/installs/:id/support-bundles", s.createSupportBundle, operation{need: permExec, id: "createSupportBundle", tag: "support",
			summary: "Collect a support bundle on the install's runner",
			description: "Starts the workflow install/<install id>/support-bundle/<bundle id> and answers at once. The runner collects its own " +
				"recent log, the install's job history, its terraform resources (names and types), each helm release's status and history, " +
				"and the events and recent container logs of the releases' namespaces; it redacts the install's sensitive values and " +
				"anything that looks like a credential before the archive leaves the account. Kept 7 days, at most 32 MiB; " +
				"an install keeps at most 10 (409 for one more, naming when the oldest expires).",
			status: 202, result: wire.SupportBundle{}, errors: []int{409, 503}}},
		{get, "/installs/:id/support-bundles", s.listSupportBundles, operation{need: permRead, id: "listSupportBundles", tag: "support",
			summary: "List an install's support bundles (those not expired)", query: []queryParam{limitParam}, status: 200, result: wire.SupportBundleList{}}},
		{get, "/installs/:id/support-bundles/:bundle", s.getSupportBundle, operation{need: permRead, id: "getSupportBundle", tag: "support",
			summary: "Get a support bundle",
			query: []queryParam{{"wait", "integer",
				"if the bundle is still being collected, wait up to this many seconds (0-60) for it before answering"}},
			status: 200, result: wire.SupportBundle{}, errors: []int{503}}},
		{del, "/installs/:id/support-bundles/:bundle", s.deleteSupportBundle, operation{need: permExec, id: "deleteSupportBundle", tag: "support",
			summary: "Delete a support bundle and its archive", description: "A bundle still being collected cannot be deleted (409).",
			status: 204, errors: []int{409}}},
		{get, "/installs/:id/support-bundles/:bundle/download", s.downloadSupportBundle, operation{need: permRead, id: "downloadSupportBundle", tag: "support",
			summary: "Download a support bundle's archive (a gzipped tar)", description: "A bundle that has not succeeded has no archive (409).",
			status: 200, result: supportBundleArchive, resultType: "application/gzip", errors: []int{409}}},
		{post, "/installs/:id/logs-requests", s.createLogsRequest, operation{need: permExec, id: "createLogsRequest", tag: "support",
			summary: "Read one namespace's (or workload's) events and container logs since a time, on the install's runner",
			description: "Starts the workflow install/<install id>/logs/<request id> and answers once its kube_logs job is queued: " +
				"follow the job's logs (logs_url) for the events and container logs, redacted as a support bundle is.",
			body: wire.CreateLogsRequest{}, status: 202, result: wire.LogsRequest{}, errors: []int{503}}},
		{post, "/installs/:id/commands/:cmd/cancel", s.cancelCommand, operation{need: permExec, id: "cancelCommand", tag: "commands",
			summary: "Cancel a command", description: "A command that has already finished is not cancelled (409).",
			status: 202, result: wire.Command{}, errors: []int{409, 503}}},

		{post, "/installs/:id/provision", s.provision, operation{need: permOperate, id: "provisionInstall", tag: "operations",
			summary:     "Provision the install",
			description: "Waits for the install's runner, applies the sandbox, then every component in dependency order (independent ones in parallel). Workflow install/<id>/provision. One mutating operation per install at a time (409).",
			body:        wire.OperationRequest{}, status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{post, "/installs/:id/deprovision", s.deprovision, operation{need: permOperate, id: "deprovisionInstall", tag: "operations",
			summary: "Deprovision the install",
			description: "Destroys every component in reverse dependency order, then the sandbox. With forget (for an install whose " +
				"account changed under it), a step that cannot destroy ends left_behind, naming on the step what is left " +
				"(left_behind) and why (error); the install forgets it and the deprovision goes on, ending deprovisioned. " +
				"forget on another operation, or with plan_only, is a 400 naming forget.",
			body: wire.OperationRequest{}, status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{post, "/installs/:id/reprovision", s.reprovision, operation{need: permOperate, id: "reprovisionInstall", tag: "operations",
			summary: "Reprovision the install", description: "Plans and applies the sandbox and every component again; a plan with no changes skips its apply.",
			body: wire.OperationRequest{}, status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{post, "/installs/:id/components/:name/deploy", s.deployComponent, operation{need: permOperate, id: "deployComponent", tag: "operations",
			summary: "Deploy one component", description: "with_dependents also deploys the components that depend on it, after it.",
			body: wire.OperationRequest{}, status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{post, "/installs/:id/components/:name/teardown", s.teardownComponent, operation{need: permOperate, id: "teardownComponent", tag: "operations",
			summary: "Tear one component down", description: "with_dependents first tears down the components that depend on it.",
			body: wire.OperationRequest{}, status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{post, "/installs/:id/update-inputs", s.updateInputs, operation{need: permOperate, id: "updateInputs", tag: "operations",
			summary: "Apply the install's inputs",
			description: "Workflow install/<id>/update_inputs. Renders the sandbox's and every component's job with the current " +
				"inputs and runs (plans, and applies under the install's approval mode) only those that render differently from " +
				"their last apply, then each step after a changed one whose rendering changed with its outputs; every other step " +
				"ends unchanged. PATCH /installs/{id}/inputs with apply does the same in one call.",
			body: wire.OperationRequest{}, status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{post, "/installs/:id/deploy", s.deployConfig, operation{need: permOperate, id: "deployConfig", tag: "operations",
			summary: "Bring the install to a config version",
			description: "Workflow install/<id>/deploy_config; config_version left out is the latest. The sandbox and the components " +
				"whose build (their source) or rendered job differs from what the install runs are planned and applied in dependency " +
				"order (under the install's approval mode), then each step after a changed one whose job changed with its outputs; " +
				"every other step ends unchanged and runs no job. Builds the version needs are waited for (and queued again if " +
				"they failed), as in a provision. Components the install runs that the version does not have are torn down last, " +
				"once every deploy step ended well, in reverse dependency order. The install then shows config_version, which " +
				"deprovision, reprovision, a component's teardown and update-inputs run (provision and a component's deploy run " +
				"the latest). An unknown " +
				"version, or one the install's inputs do not satisfy, is 422 naming config_version; another operation running, 409.",
			body: wire.DeployConfigRequest{}, status: 202, result: wire.Operation{}, errors: []int{409, 422, 503}}},
		{post, "/apps/:id/releases", s.createRelease, operation{need: permOperate, id: "createRelease", tag: "releases",
			summary: "Deploy a config version to some of the app's installs, in batches",
			description: "Workflow app/<app id>/release/<release id>. Installs are taken in name order, batch_size (or batch_percent) " +
				"at a time; each install's deploy is its deploy_config operation (workflow install/<id>/deploy_config, a child of the " +
				"release's, shown on the install like any operation). An install busy with another operation fails in the release, " +
				"with the reason. Once failure_threshold installs have failed the release halts (status halted, error naming the " +
				"install and why) at the end of the batch; resume deploys the failed ones again, then goes on. Each install records " +
				"the version it ran before (from_version), which a rollback brings it back to. Bad input is a 4xx naming the field: " +
				"config_version (unknown, or an install's inputs do not satisfy it), installs (none given, an unknown id or name, a " +
				"bad selector, one matching nothing), batch_size, batch_percent, pause_between_batches, failure_threshold; a release " +
				"of the app that has not ended (running, paused or halted) is 409.",
			body: wire.CreateReleaseRequest{}, status: 202, result: wire.Release{}, errors: []int{409, 422, 503}}},
		{get, "/apps/:id/releases", s.listReleases, operation{need: permRead, id: "listReleases", tag: "releases",
			summary: "List the app's releases, newest first (50)", status: 200, result: wire.ReleaseList{}}},
		{get, "/apps/:id/releases/:rid", s.getRelease, operation{need: permRead, id: "getRelease", tag: "releases",
			summary: "Get a release: its status and each batch's installs (state, operation, versions, progress)",
			status:  200, result: wire.Release{}}},
		{post, "/apps/:id/releases/:rid/pause", s.pauseRelease, operation{need: permOperate, id: "pauseRelease", tag: "releases",
			summary:     "Pause a release before its next batch (the running batch finishes)",
			description: "A release that has ended is 409.", status: 202, result: wire.Release{}, errors: []int{409, 503}}},
		{post, "/apps/:id/releases/:rid/resume", s.resumeRelease, operation{need: permOperate, id: "resumeRelease", tag: "releases",
			summary:     "Resume a paused or halted release (a halted one deploys its failed installs again first)",
			description: "A release that has ended is 409.", status: 202, result: wire.Release{}, errors: []int{409, 503}}},
		{post, "/apps/:id/releases/:rid/cancel", s.cancelRelease, operation{need: permOperate, id: "cancelRelease", tag: "releases",
			summary:     "Cancel a release: the running batch finishes, the installs not reached are skipped",
			description: "A release that has ended is 409.", status: 202, result: wire.Release{}, errors: []int{409, 503}}},
		{post, "/apps/:id/releases/:rid/rollback", s.rollbackRelease, operation{need: permOperate, id: "rollbackRelease", tag: "releases",
			summary: "Roll a release back: a new release bringing every install it deployed back to the version it ran before",
			description: "In the same batches and pacing (rollback_of names the release). A release of the app that has not ended is 409; " +
				"one that deployed no install, 422.",
			status: 202, result: wire.Release{}, errors: []int{409, 422, 503}}},
		{get, "/installs/:id/offline-install", s.exportOfflineInstall, operation{need: permOperate, id: "exportOfflineInstall", tag: "operations",
			audited: true, summary: "The install file an offline deploy reads (outpost-runner offline deploy --install-file)",
			description: "Who the install is (org, app, install, labels) and its non-sensitive inputs with their values; " +
				"sensitive inputs (set as sensitive, or declared so by the app's latest config) by name only, never valued: " +
				"the customer enters them on the machine. Recorded in the audit log.",
			status: 200, result: wire.OfflineInstall{}}},
		{post, "/installs/:id/offline-results", s.importOfflineResult, operation{need: permOperate, id: "importOfflineResult", tag: "operations",
			summary: "Import an offline deploy's result",
			description: "Records it as a finished operation of kind offline_deploy, source offline (no workflow): its steps " +
				"with their statuses, times, errors and policy results, each step's log as a job's (GET /jobs/{id}/logs of the " +
				"step's apply_job_id), a succeeded sandbox's or component's outputs as the install's, and, when it succeeded, the " +
				"install at its config_version, active. The same result again (bundle_index and started_at) answers the " +
				"operation it made (200). A field missing or wrong is 422 naming it (format, install_id: a result of another " +
				"install, app_id, config_version: not a version of the install's app, bundle_index, started_at, status, " +
				"steps[i].name, steps[i].kind, steps[i].status, steps[i].component); another operation holding the install, 409.",
			body: wire.OfflineResult{}, maxBody: maxOfflineResultBytes, status: 201, result: wire.Operation{},
			otherResults: map[int]any{200: wire.Operation{}}, errors: []int{409, 422}}},
		{get, "/installs/:id/operations", s.listOperations, operation{need: permRead, id: "listOperations", tag: "operations",
			summary: "List an install's operations", query: []queryParam{limitParam}, status: 200, result: wire.OperationList{}}},
		{get, "/installs/:id/operations/:op", s.getOperation, operation{need: permRead, id: "getOperation", tag: "operations",
			summary: "Get an operation with its steps (status, times, jobs, plan)",
			query:   []queryParam{{"wait", "integer", "if the operation has not finished, wait up to this many seconds (0-60)"}},
			status:  200, result: wire.Operation{}}},
		{post, "/installs/:id/operations/:op/steps/:step/approve", s.approveStep, operation{need: permApprove, id: "approveStep", tag: "operations",
			summary: "Approve a step's plan", description: "Only a step waiting for approval (install approval mode prompt); 409 otherwise.",
			status: 202, result: wire.Decision{}, errors: []int{409, 503}}},
		{post, "/installs/:id/operations/:op/steps/:step/deny", s.denyStep, operation{need: permApprove, id: "denyStep", tag: "operations",
			summary: "Deny a step's plan", description: "Ends the operation: nothing more starts; steps already running finish.",
			status: 202, result: wire.Decision{}, errors: []int{409, 503}}},
		{post, "/installs/:id/operations/:op/cancel", s.cancelOperation, operation{need: permOperate, id: "cancelOperation", tag: "operations",
			summary: "Cancel an operation",
			description: "Cancels the operation's workflow: nothing more starts, the running steps' jobs are cancelled (the runner " +
				"stops their processes), a step waiting for approval ends; the operation ends cancelled and the install's lock " +
				"is released. Answers at once (poll or wait on the operation); one that has already finished is 409.",
			status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{post, "/notifications/subscriptions", s.createSubscription, operation{need: permAdmin, id: "createNotificationSubscription", tag: "notifications",
			summary: "Subscribe a webhook or Slack URL to the org's events",
			description: "A webhook's signing secret is made by the server and is in this answer only (docs/notifications.md shows how " +
				"to verify a delivery). An empty or unknown event type, an app not of the org, a bad label selector or a URL " +
				"that is not https (http only to loopback) is 400 naming the field (event_types[i], app_ids[i], label_selector, url).",
			body: wire.CreateNotificationSubscriptionRequest{}, status: 201, result: wire.NewNotificationSubscription{}}},
		{get, "/notifications/subscriptions", s.listSubscriptions, operation{need: permRead, id: "listNotificationSubscriptions", tag: "notifications",
			summary: "List the org's notification subscriptions (never their secrets)", status: 200, result: wire.NotificationSubscriptionList{}}},
		{get, "/notifications/subscriptions/:id", s.getSubscription, operation{need: permRead, id: "getNotificationSubscription", tag: "notifications",
			summary: "A notification subscription (never its secret)", status: 200, result: wire.NotificationSubscription{}}},
		{patch, "/notifications/subscriptions/:id", s.patchSubscription, operation{need: permAdmin, id: "updateNotificationSubscription", tag: "notifications",
			summary: "Change a subscription's name, events, filters, URL or whether it is enabled", description: "Bad input is 400 naming the field, as at creation.",
			body: wire.PatchNotificationSubscriptionRequest{}, status: 200, result: wire.NotificationSubscription{}}},
		{del, "/notifications/subscriptions/:id", s.deleteSubscription, operation{need: permAdmin, id: "deleteNotificationSubscription", tag: "notifications",
			summary: "Delete a subscription and its deliveries", status: 204}},
		{get, "/notifications/subscriptions/:id/deliveries", s.listDeliveries, operation{need: permRead, id: "listNotificationDeliveries", tag: "notifications",
			summary: "A subscription's deliveries, newest first, each with its tries (status code or error, time)",
			query:   []queryParam{limitParam}, status: 200, result: wire.NotificationDeliveryList{}}},
		{post, "/notifications/deliveries/:id/redeliver", s.redeliver, operation{need: permAdmin, id: "redeliverNotification", tag: "notifications",
			summary:     "Send a delivery's event again, as a new delivery",
			description: "Starts the new delivery's workflow (org/<org>/notify/<delivery id>) and answers at once with it, pending.",
			status:      202, result: wire.NotificationDelivery{}, errors: []int{503}}},
		{get, "/installs/:id/maintenance-windows", s.getMaintenanceWindows, operation{need: permRead, id: "getMaintenanceWindows", tag: "installs",
			summary: "The install's maintenance windows and the one open now or next", status: 200, result: wire.MaintenanceWindows{}}},
		{put, "/installs/:id/maintenance-windows", s.putMaintenanceWindows, operation{need: permOperate, id: "setMaintenanceWindows", tag: "installs",
			summary: "Set the install's maintenance windows",
			description: "Replaces them (an empty list: none). Work the platform starts on its own (a drift reconcile, a release " +
				"batch) waits for the next window, with the operation showing waiting_for_maintenance_window and waiting_until; " +
				"an operation a user starts runs at once unless its request sets in_maintenance_window. A window with a bad day, " +
				"start, duration (0, or over 168h) or time zone is 400 naming the field (windows[i].time_zone, …).",
			body: wire.MaintenanceWindowsRequest{}, status: 200, result: wire.MaintenanceWindows{}}},
		{put, "/installs/:id/drift-schedule", s.putDriftSchedule, operation{need: permOperate, id: "setDriftSchedule", tag: "installs",
			summary: "Check the install for drift on a schedule",
			description: "Creates, changes or (every \"\" or \"0\") deletes the install's Temporal schedule " +
				"install/<id>/drift: a drift_check every interval (one still running skips the next). With reconcile, under " +
				"approve-all, a check that finds drift waits for the install's maintenance window (the check shows " +
				"waiting_for_maintenance_window until waiting_until), then starts a reconcile_drift operation (workflow " +
				"install/<id>/reconcile_drift, triggered_by the check): it takes the install's lock, plans and applies the steps " +
				"the check found drifted, then each step after one of them whose job renders differently with their new outputs; " +
				"every other step ends unchanged, with no job. Its applies clear the drift. " +
				"A bad interval is 400 naming every.",
			body: wire.DriftScheduleRequest{}, status: 200, result: wire.DriftSchedule{}, errors: []int{503}}},
		{post, "/installs/:id/drift-check", s.driftCheck, operation{need: permOperate, id: "checkDrift", tag: "operations",
			summary: "Check the install for drift now",
			description: "Starts a drift_check operation (workflow install/<id>/drift_check) on what the install runs: the " +
				"sandbox and every component are planned at once: terraform with its state lock off (-lock=false); a helm_chart " +
				"with helm's dry run and its objects compared with the cluster's (server-side apply dry runs: an object edited " +
				"or deleted behind helm's back is drift, a field the chart does not set is not); a container_image by asking " +
				"the install's registry whether it still holds the image whole. Without the install's lock, so it never holds " +
				"up an operation, nor is held up by one. A step whose plan is not empty ends drifted and is recorded " +
				"(GET /installs/{id}/drift) with its plan until a later check or an apply of it clears it; the others end " +
				"no_changes. 409 when a check runs already or the install runs nothing yet.",
			status: 202, result: wire.Operation{}, errors: []int{409, 503}}},
		{get, "/installs/:id/drift", s.getDrift, operation{need: permRead, id: "getDrift", tag: "installs",
			summary: "What the drift checks found: per sandbox and component, drifted, since when, the plan",
			status:  200, result: wire.Drift{}}},
		{put, "/installs/:id/approval-mode", s.setApprovalMode, operation{need: permAdmin, id: "setApprovalMode", tag: "installs",
			summary: "Set how the install's plans are approved", body: wire.ApprovalMode{}, status: 200, result: wire.ApprovalMode{}}},
		{get, "/installs/:id/components", s.listInstallComponents, operation{need: permRead, id: "listInstallComponents", tag: "builds",
			summary:     "Which build each of the install's components runs",
			description: "Set when a deploy synced the build into the install's registry and applied it; a torn-down component is not listed.",
			status:      200, result: wire.InstallComponentList{}}},
		{get, "/installs/:id/outputs", s.getOutputs, operation{need: permRead, id: "getOutputs", tag: "installs",
			summary: "The outputs of the install's sandbox and components", description: "Sensitive outputs show only {\"sensitive\": true}.",
			status: 200, result: wire.Outputs{}}},
	}
}
