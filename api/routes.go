package api

import (
	"net/http"

	"github.com/labstack/echo/v4"
)

// route is one /v1 route: where it is, what serves it, and how the OpenAPI
// document describes it.
type route struct {
	method  string
	path    string // below /v1, in echo's syntax (":id")
	handler echo.HandlerFunc
	doc     operation
}

// operation documents a route.
type operation struct {
	id, tag, summary string
	description      string
	public           bool // no API token needed
	query            []queryParam
	body             string // schema of the request body; "" when it takes none
	status           int    // the success status
	result           string // schema of the success body; "" when there is none
	events           bool   // may answer text/event-stream instead
	errors           []int  // statuses beyond those every route of its kind has
}

type queryParam struct {
	name, typ, description string
}

var limitParam = queryParam{"limit", "integer", "how many to return, newest first (1-200, default 50)"}

// routeTable lists every /v1 route.
func (s *Server) routeTable() []route {
	const get, post, del = http.MethodGet, http.MethodPost, http.MethodDelete
	return []route{
		{get, "/openapi.json", s.serveOpenAPI, operation{id: "getOpenAPI", tag: "meta", public: true,
			summary: "This document", status: 200, result: "OpenAPIDocument"}},

		{post, "/tokens", s.createToken, operation{id: "createToken", tag: "tokens",
			summary: "Create an API token", description: "The token is in the answer, and only there.",
			body: "CreateTokenRequest", status: 201, result: "NewToken"}},
		{get, "/tokens", s.listTokens, operation{id: "listTokens", tag: "tokens",
			summary: "List the org's API tokens (never their values)", status: 200, result: "TokenList"}},
		{del, "/tokens/:id", s.revokeToken, operation{id: "revokeToken", tag: "tokens",
			summary: "Revoke an API token", status: 204}},

		{post, "/apps", s.createApp, operation{id: "createApp", tag: "apps",
			summary: "Create an app", body: "CreateAppRequest", status: 201, result: "App", errors: []int{409}}},
		{get, "/apps", s.listApps, operation{id: "listApps", tag: "apps",
			summary: "List apps", status: 200, result: "AppList"}},
		{get, "/apps/:id", s.getApp, operation{id: "getApp", tag: "apps",
			summary: "Get an app", status: 200, result: "App"}},
		{del, "/apps/:id", s.deleteApp, operation{id: "deleteApp", tag: "apps",
			summary: "Delete an app and its components", description: "An app that still has installs is not deleted (409).",
			status: 204, errors: []int{409}}},

		{post, "/apps/:id/components", s.createComponent, operation{id: "createComponent", tag: "components",
			summary: "Add a component to an app", description: "Dependencies name components of the same app that already exist.",
			body: "CreateComponentRequest", status: 201, result: "Component", errors: []int{409}}},
		{get, "/apps/:id/components", s.listComponents, operation{id: "listComponents", tag: "components",
			summary: "List an app's components", status: 200, result: "ComponentList"}},
		{get, "/components/:id", s.getComponent, operation{id: "getComponent", tag: "components",
			summary: "Get a component", status: 200, result: "Component"}},
		{del, "/components/:id", s.deleteComponent, operation{id: "deleteComponent", tag: "components",
			summary: "Delete a component", description: "A component another one depends on is not deleted (409).",
			status: 204, errors: []int{409}}},

		{post, "/installs", s.createInstall, operation{id: "createInstall", tag: "installs",
			summary:     "Create an install and its runner",
			description: "The answer holds the runner's one-time registration token; it is never shown again (rotate it to get a new one).",
			body:        "CreateInstallRequest", status: 201, result: "NewInstall", errors: []int{409}}},
		{get, "/installs", s.listInstalls, operation{id: "listInstalls", tag: "installs",
			summary: "List installs", query: []queryParam{{"app_id", "string", "only the installs of this app"}},
			status: 200, result: "InstallList"}},
		{get, "/installs/:id", s.getInstall, operation{id: "getInstall", tag: "installs",
			summary: "Get an install", status: 200, result: "Install"}},
		{del, "/installs/:id", s.deleteInstall, operation{id: "deleteInstall", tag: "installs",
			summary: "Delete an install and its runner", description: "The runner's tokens stop working at once; jobs and logs are kept.",
			status: 204}},
		{get, "/installs/:id/jobs", s.listInstallJobs, operation{id: "listInstallJobs", tag: "jobs",
			summary: "List an install's jobs", query: []queryParam{limitParam}, status: 200, result: "JobList"}},

		{get, "/runners", s.listRunners, operation{id: "listRunners", tag: "runners",
			summary: "List runners", description: "The org's build runner is created on first use.",
			status: 200, result: "RunnerList"}},
		{get, "/runners/:id", s.getRunner, operation{id: "getRunner", tag: "runners",
			summary: "Get a runner", status: 200, result: "Runner"}},
		{post, "/runners/:id/registration-token", s.rotateRegistrationToken, operation{id: "rotateRegistrationToken", tag: "runners",
			summary:     "Issue a new one-time registration token",
			description: "The previous registration token stops working; tokens the runner already holds stay valid.",
			status:      200, result: "RegistrationToken"}},
		{post, "/runners/:id/revoke-tokens", s.revokeRunnerTokens, operation{id: "revokeRunnerTokens", tag: "runners",
			summary: "Revoke every access token of a runner", status: 204}},

		{get, "/jobs/:id", s.getJob, operation{id: "getJob", tag: "jobs",
			summary: "Get a job with its attempts and status history", status: 200, result: "JobDetail"}},
		{get, "/jobs/:id/logs", s.jobLogs, operation{id: "getJobLogs", tag: "jobs",
			summary: "Read or follow a job's logs",
			description: "Without follow: a page of chunks after the cursor and the cursor to continue from. " +
				"With follow=true: Server-Sent Events, one `log` event per chunk (data: a LogChunk, id: its cursor) " +
				"and a final `end` event (data: a LogEnd) once the job is finished and every line was sent.",
			query: []queryParam{
				{"after", "string", "cursor <attempt>.<seq>: return the chunks after it (default: from the start)"},
				{"limit", "integer", "chunks per page (1-1000, default 200); ignored with follow"},
				{"follow", "boolean", "stream the logs as Server-Sent Events until the job finishes"},
			},
			status: 200, result: "LogPage", events: true}},

		{post, "/installs/:id/commands", s.createCommand, operation{id: "createCommand", tag: "commands",
			summary:     "Run a debug command on the install's runner",
			description: "Starts the workflow install/<install id>/command/<command id> and answers at once; poll or wait on the command.",
			body:        "CreateCommandRequest", status: 202, result: "Command", errors: []int{409, 503}}},
		{get, "/installs/:id/commands", s.listCommands, operation{id: "listCommands", tag: "commands",
			summary: "List an install's commands", query: []queryParam{limitParam}, status: 200, result: "CommandList"}},
		{get, "/installs/:id/commands/:cmd", s.getCommand, operation{id: "getCommand", tag: "commands",
			summary: "Get a command",
			query: []queryParam{{"wait", "integer",
				"if the command has not finished, wait up to this many seconds (0-60) for it to finish before answering"}},
			status: 200, result: "Command", errors: []int{503}}},
		{post, "/installs/:id/commands/:cmd/cancel", s.cancelCommand, operation{id: "cancelCommand", tag: "commands",
			summary: "Cancel a command", description: "A command that has already finished is not cancelled (409).",
			status: 202, result: "Command", errors: []int{409, 503}}},
	}
}
