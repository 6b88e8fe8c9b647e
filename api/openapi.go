package api

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// openAPIDocument describes routes (plus /healthz) as an OpenAPI 3.0 document.
func openAPIDocument(routes []route) map[string]any {
	paths := map[string]map[string]any{
		"/healthz": {"get": map[string]any{
			"operationId": "healthz", "tags": []string{"meta"}, "summary": "Health: answers once the database does",
			"security": []any{},
			"responses": map[string]any{
				"200": jsonResponse("OK", ref("Health")),
				"503": jsonResponse("the database does not answer", ref("Health")),
			},
		}},
	}
	for _, r := range routes {
		p := "/v1" + openAPIPath(r.path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(r.method)] = r.openAPIOperation()
	}
	return map[string]any{
		"openapi": "3.0.3",
		"info": map[string]any{
			"title":   "Outpost control API",
			"version": "1",
			"description": "Manage apps, installs, runners and jobs of an Outpost org. Authenticate with " +
				"`Authorization: Bearer <API token>`; the token's org scopes everything.",
		},
		"paths":    paths,
		"security": []any{map[string]any{"bearer": []string{}}},
		"components": map[string]any{
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer"}},
			"schemas":         withSchemas(schemas(), configSchemas(), operationSchemas(), inputSchemas(), deploySchemas(), maintenanceSchemas(), driftSchemas(), buildSchemas(), runnerInstallSchemas(), labelSchemas(), releaseSchemas(), auditSchemas(), supportSchemas()),
		},
	}
}

// openAPIPath turns echo's ":param" segments into "{param}".
func openAPIPath(echoPath string) string {
	parts := strings.Split(echoPath, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

func pathParams(echoPath string) []string {
	var out []string
	for _, p := range strings.Split(echoPath, "/") {
		if strings.HasPrefix(p, ":") {
			out = append(out, p[1:])
		}
	}
	return out
}

func (r route) openAPIOperation() map[string]any {
	d := r.doc
	op := map[string]any{"operationId": d.id, "tags": []string{d.tag}, "summary": d.summary}
	if d.description != "" {
		op["description"] = d.description
	}
	params := []any{}
	for _, name := range pathParams(r.path) {
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": str})
	}
	for _, q := range d.query {
		params = append(params, map[string]any{"name": q.name, "in": "query", "description": q.description,
			"schema": map[string]any{"type": q.typ}})
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if d.body != "" {
		content, types := map[string]any{}, d.bodyTypes
		if len(types) == 0 {
			types = []string{"application/json"}
		}
		for _, t := range types {
			content[t] = map[string]any{"schema": ref(d.body)}
		}
		op["requestBody"] = map[string]any{"required": true, "content": content}
	}
	success := map[string]any{"description": http.StatusText(d.status)}
	if d.result != "" {
		resultType := "application/json"
		if d.resultType != "" {
			resultType = d.resultType
		}
		content := map[string]any{resultType: map[string]any{"schema": ref(d.result)}}
		if d.events {
			content["text/event-stream"] = map[string]any{"schema": str}
		}
		success["content"] = content
	}
	responses := map[string]any{strconv.Itoa(d.status): success}
	for code, schema := range d.otherResults {
		responses[strconv.Itoa(code)] = jsonResponse(http.StatusText(code), ref(schema))
	}
	errs := slices.Clone(d.errors)
	if !d.public {
		errs = append(errs, http.StatusUnauthorized, http.StatusTooManyRequests)
	}
	if len(pathParams(r.path)) > 0 {
		errs = append(errs, http.StatusNotFound)
	}
	if d.body != "" || len(d.query) > 0 {
		errs = append(errs, http.StatusBadRequest)
	}
	if d.body != "" {
		errs = append(errs, http.StatusRequestEntityTooLarge)
	}
	for _, code := range errs {
		schema := "Error"
		if s, ok := d.errorBodies[code]; ok {
			schema = s
		}
		responses[strconv.Itoa(code)] = jsonResponse(http.StatusText(code), ref(schema))
	}
	op["responses"] = responses
	if d.public {
		op["security"] = []any{}
	}
	return op
}

func jsonResponse(description string, schema any) map[string]any {
	return map[string]any{"description": description,
		"content": map[string]any{"application/json": map[string]any{"schema": schema}}}
}

// Schema builders.
var (
	str      = map[string]any{"type": "string"}
	integer  = map[string]any{"type": "integer"}
	boolean  = map[string]any{"type": "boolean"}
	dateTime = map[string]any{"type": "string", "format": "date-time"}
	anyMap   = map[string]any{"type": "object", "additionalProperties": true}
)

type props map[string]any

func ref(name string) map[string]any { return map[string]any{"$ref": "#/components/schemas/" + name} }
func arrayOf(items any) map[string]any {
	return map[string]any{"type": "array", "items": items}
}
func nullable(s map[string]any) map[string]any {
	out := map[string]any{"nullable": true}
	for k, v := range s {
		out[k] = v
	}
	return out
}
func described(s map[string]any, description string) map[string]any {
	out := map[string]any{"description": description}
	for k, v := range s {
		out[k] = v
	}
	return out
}

// object is a response object; every listed property is always present.
func object(p props, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": map[string]any(p)}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// request is a request body: unknown fields are refused.
func request(p props, required ...string) map[string]any {
	o := object(p, required...)
	o["additionalProperties"] = false
	return o
}

func listOf(key, item string) map[string]any {
	return object(props{key: arrayOf(ref(item))}, key)
}

func schemas() map[string]any {
	return map[string]any{
		"Error": object(props{
			"code":    described(str, "machine-readable, e.g. invalid_field, not_found, conflict, unauthorized, too_large"),
			"message": str,
			"field":   described(str, "the offending field, when there is one"),
		}, "code", "message"),
		"Health":          object(props{"status": described(str, "ok or unavailable")}, "status"),
		"OpenAPIDocument": map[string]any{"type": "object", "additionalProperties": true},

		"CreateTokenRequest": request(props{"name": str}, "name"),
		"Org":                object(props{"id": str, "name": str, "created_at": dateTime}, "id", "name", "created_at"),
		"Token": object(props{"id": str, "org_id": str, "name": str, "created_at": dateTime,
			"revoked_at": nullable(dateTime)}, "id", "org_id", "name", "created_at"),
		"NewToken": object(props{"id": str, "org_id": str, "name": str, "created_at": dateTime,
			"token": described(str, "the token; shown only here")}, "id", "org_id", "name", "created_at", "token"),
		"TokenList": listOf("tokens", "Token"),

		"CreateAppRequest": request(props{"name": str, "description": str}, "name"),
		"App": object(props{"id": str, "org_id": str, "name": str, "description": str,
			"created_at": dateTime, "updated_at": dateTime}, "id", "org_id", "name", "description", "created_at", "updated_at"),
		"AppList": listOf("apps", "App"),

		"CreateComponentRequest": request(props{
			"name":         str,
			"type":         map[string]any{"type": "string", "enum": []string{"terraform_module", "helm_chart", "container_image", "docker_build"}},
			"dependencies": described(arrayOf(str), "names of components of the same app"),
			"config":       anyMap,
		}, "name", "type"),
		"Component": object(props{"id": str, "org_id": str, "app_id": str, "name": str, "type": str,
			"dependencies": arrayOf(str), "config": anyMap, "created_at": dateTime, "updated_at": dateTime},
			"id", "org_id", "app_id", "name", "type", "dependencies", "config", "created_at", "updated_at"),
		"ComponentList": listOf("components", "Component"),

		"InputRequest": request(props{"name": str, "value": str, "sensitive": described(boolean,
			"a sensitive value is stored but never shown again")}, "name"),
		"CreateInstallRequest": request(props{"app_id": str, "name": str, "inputs": arrayOf(ref("InputRequest")), "labels": ref("Labels")},
			"app_id", "name"),
		"Input": object(props{"name": str, "value": described(str, "left out when sensitive"), "sensitive": boolean},
			"name", "sensitive"),
		"RunnerRef": object(props{"id": str}, "id"),
		"Install": object(props{"id": str, "org_id": str, "app_id": str, "name": str, "status": str,
			"inputs": arrayOf(ref("Input")), "inputs_version": integer,
			"config_version": described(integer, "the app config version the install runs: the one its last provision, reprovision or deploy_config that succeeded brought it to (0 before any)"),
			"labels":         ref("Labels"),
			"maintenance_windows": described(arrayOf(ref("MaintenanceWindow")),
				"when work the platform starts on its own (a drift reconcile, a release) may run; empty: at any time"),
			"drift_every":     described(str, "the interval of the install's drift checks (\"\": no schedule)"),
			"drift_reconcile": described(boolean, "drift found is applied (under approve-all) in the install's maintenance window"),
			"approval_mode":   described(str, "approve-all: plans apply at once; prompt: each waits for approval"),
			"runner":          nullable(ref("RunnerRef")), "created_at": dateTime, "updated_at": dateTime,
			"last_operation": described(nullable(ref("LastOperation")), "in the list only: the install's newest operation (null: none yet)"),
			"drifted":        described(arrayOf(str), "in the list only: the sandbox and components the drift checks found drifted")},
			"id", "org_id", "app_id", "name", "status", "inputs", "config_version", "labels", "maintenance_windows", "created_at", "updated_at"),
		"LastOperation": object(props{"id": str, "kind": str, "status": str, "error": str,
			"waiting_approval": described(boolean, "a step of it waits for approval"), "created_at": dateTime, "finished_at": nullable(dateTime)},
			"id", "kind", "status", "waiting_approval", "created_at"),
		"NewInstall": object(props{"id": str, "org_id": str, "app_id": str, "name": str, "status": str,
			"inputs": arrayOf(ref("Input")), "inputs_version": integer, "runner": ref("NewRunner"), "created_at": dateTime, "updated_at": dateTime},
			"id", "org_id", "app_id", "name", "status", "inputs", "runner", "created_at", "updated_at"),
		"NewRunner": object(props{"id": str, "registration_token": described(str,
			"one-time token the runner exchanges for its access token; shown only here")}, "id", "registration_token"),
		"InstallList": listOf("installs", "Install"),

		"Runner": object(props{"id": str, "org_id": str, "kind": described(str, "install or build"),
			"install_id": nullable(str), "name": str, "version": str, "capabilities": arrayOf(str),
			"registered_at": nullable(dateTime), "last_seen_at": nullable(dateTime),
			"status":       map[string]any{"type": "string", "enum": []string{"online", "offline"}},
			"status_since": described(nullable(dateTime), "online: since its first call after a gap; offline: its last call; null when never seen"),
			"running_jobs": described(integer, "its jobs under way"), "queued_jobs": described(integer, "its jobs waiting to be claimed"),
			"connection_errors": described(arrayOf(ref("ConnectionError")),
				"the runner's latest failed calls to the gateway (dns, tls, proxy, network, http, clock), as it reported them once it got through again, oldest first"),
			"updates":    described(arrayOf(ref("RunnerUpdate")), "GET /runners/{id} only: its latest updates, newest first"),
			"created_at": dateTime},
			"id", "org_id", "kind", "install_id", "version", "capabilities", "last_seen_at", "status", "status_since", "running_jobs", "queued_jobs", "created_at"),
		"RunnerVersion": object(props{"version": str, "repository": described(str, "in the vendor's registry"),
			"digest": described(str, "the artifact's manifest digest"), "binary_digest": described(str, "the executable's sha256 digest"),
			"size": integer, "created_at": dateTime}, "version", "repository", "digest", "binary_digest", "size", "created_at"),
		"RunnerVersionList": listOf("versions", "RunnerVersion"),
		"RunnerPolicyRequest": request(props{
			"version": described(str, "a published runner version; \"\" for none (an install then follows its org)"),
			"pinned":  described(boolean, "installs only: the install's runner is not updated")}),
		"RunnerPolicy": object(props{"install_id": str, "org_version": described(str, "the version the org wants"),
			"version": described(str, "the install's own version (overrides the org's)"), "pinned": boolean,
			"target": described(str, "the version an update moves the runner to; \"\" when pinned or none is wanted")},
			"org_version", "version", "pinned", "target"),
		"CreateRunnerUpdateRequest": request(props{
			"version": described(str, "default: the install's target version (its own, else its org's)"),
			"health_deadline_seconds": map[string]any{"type": "integer", "minimum": minHealthDeadline, "maximum": maxHealthDeadline,
				"default": defaultHealthDeadline, "description": "how long the new runner has to report healthy before the old one rolls back"},
			"drain_timeout_seconds": map[string]any{"type": "integer", "minimum": minDrainTimeout, "maximum": maxDrainTimeout,
				"default": defaultDrainTimeout, "description": "how long the old runner waits for its running jobs before it hands over; past it the update fails and the jobs go on"}}),
		"RunnerUpdate": object(props{"id": str, "org_id": str, "install_id": str, "runner_id": str,
			"from_version": str, "version": str, "digest": str, "workflow_id": str,
			"status":     map[string]any{"type": "string", "enum": []string{"running", "succeeded", "failed"}},
			"reason":     described(str, "why it failed: the runner's own report of its rollback when there is one"),
			"created_at": dateTime, "finished_at": nullable(dateTime)},
			"id", "org_id", "install_id", "runner_id", "version", "digest", "workflow_id", "status", "created_at"),
		"RunnerList": listOf("runners", "Runner"),
		"ConnectionError": object(props{"at": dateTime, "kind": map[string]any{"type": "string",
			"enum": []string{"dns", "tls", "proxy", "network", "http", "clock"}}, "message": str}, "at", "kind", "message"),
		"RegistrationToken": object(props{"runner_id": str, "registration_token": str}, "runner_id", "registration_token"),

		"Job": object(props{"id": str, "org_id": str, "runner_id": str, "install_id": nullable(str),
			"idempotency_key": str, "type": str,
			"status":  map[string]any{"type": "string", "enum": []string{"queued", "running", "succeeded", "failed", "cancelled", "lost"}},
			"attempt": integer, "timeout_ms": integer, "lease_expires_at": dateTime, "cancel_requested_at": dateTime,
			"exit_code": integer, "error": str, "created_at": dateTime, "started_at": dateTime, "finished_at": dateTime,
			"updated_at": dateTime}, "id", "org_id", "runner_id", "type", "status", "attempt", "created_at", "updated_at"),
		"JobAttempt": object(props{"attempt": integer, "runner_id": str, "runner_version": described(str, "the version of the runner that claimed it"),
			"status": str, "claimed_at": dateTime,
			"finished_at": dateTime, "last_seq": integer, "error": str}, "attempt", "runner_id", "status", "claimed_at"),
		"JobEvent": object(props{"attempt": integer, "status": str, "message": str, "at": dateTime}, "attempt", "status", "at"),
		"JobDetail": map[string]any{"allOf": []any{ref("Job"), object(props{
			"attempts": arrayOf(ref("JobAttempt")), "history": arrayOf(ref("JobEvent")),
			"waiting": described(ref("JobWaiting"), "only while the job is queued: why it has not been claimed")}, "attempts", "history")}},
		"JobWaiting": object(props{
			"reason": map[string]any{"type": "string", "enum": []string{waitRunnerOffline, waitInputs, waitQueue},
				"description": "runner_offline: its runner is not polling; inputs: its inputs are not known yet and its runner cannot hold it; queue: its runner is online and it waits its turn"},
			"message": str, "position": described(integer, "its place in its runner's queue (1: the next claim takes it)"),
			"runner_status": str, "runner_last_seen_at": nullable(dateTime), "runner_running_jobs": integer},
			"reason", "message", "position", "runner_status", "runner_last_seen_at", "runner_running_jobs"),
		"JobList": listOf("jobs", "Job"),
		"LogChunk": object(props{"attempt": integer, "seq": integer,
			"stream": map[string]any{"type": "string", "enum": []string{"stdout", "stderr", "system"}},
			"data":   str, "time": dateTime}, "attempt", "seq", "stream", "data", "time"),
		"LogPage": object(props{"chunks": arrayOf(ref("LogChunk")),
			"next_cursor": described(str, "pass as ?after= to read on")}, "chunks", "next_cursor"),
		"LogEnd": object(props{"status": str, "exit_code": integer, "error": str}, "status"),

		"CreateCommandRequest": request(props{
			"command":         described(map[string]any{"type": "array", "items": str, "minItems": 1, "maxItems": maxCommandArgs}, "argv: the program and its arguments, each at most 4 KiB"),
			"timeout_seconds": map[string]any{"type": "integer", "minimum": 1, "maximum": maxCommandTimeout, "default": defaultCommandTimeout},
		}, "command"),
		"Command": object(props{"id": str, "install_id": str, "command": arrayOf(str), "timeout_seconds": integer,
			"workflow_id": str, "job_id": str,
			"status":    map[string]any{"type": "string", "enum": []string{"queued", "running", "succeeded", "failed", "cancelled", "lost"}},
			"exit_code": integer, "output": described(str, "stdout and stderr, interleaved, possibly truncated"),
			"error": str, "created_at": dateTime, "finished_at": dateTime},
			"id", "install_id", "command", "timeout_seconds", "workflow_id", "status", "output", "created_at"),
		"CommandList": listOf("commands", "Command"),
	}
}
