// Package api is Outpost's public control API: the HTTP surface (echo, under
// /v1) through which a vendor manages its org — API tokens, apps, their config
// versions and builds, installs and their inputs and outputs, install
// operations (provision, reprovision, deprovision, deploy and teardown of a
// component, with prompt approval), runners, jobs and their logs, and debug
// commands run on an install's runner. The runner gateway (/runner/v1) is
// package api/gateway, on a listener of its own.
//
// Every /v1 route but /v1/openapi.json takes "Authorization: Bearer <API
// token>". The token's org scopes everything: an object of another org is
// answered exactly like one that does not exist (404). Bodies are strict JSON
// (unknown fields and wrong types are refused with a 400 naming the field) of at
// most 1 MiB (413 beyond). Secrets are shown once, when they are created: an API
// token by POST /v1/tokens, a runner's registration token by POST /v1/installs
// and POST /v1/runners/{id}/registration-token. Sensitive install inputs are
// never shown (their value is left out, "sensitive": true).
//
// Every call other than a GET is recorded in the org's audit log once
// answered, refused ones too (audit.go); GET /v1/audit lists it.
//
// Durable operations (install operations, builds, debug commands) run as
// Temporal workflows; this package starts, cancels and awaits them through the
// small Operations interface, which package worker implements.
//
// The route table in routes.go is the one place a route is declared: it mounts
// the handler and documents it in the OpenAPI document served at
// /v1/openapi.json. What a route takes and answers it names as types of
// package wire, never the store's models: handlers convert models with one
// small converter per type (beside the handler), and openapi.go reflects the
// document's schemas from the same types (github.com/swaggest/openapi-go),
// so the document and the answers cannot disagree. TestOpenAPIDocumentIsLintClean
// holds the document to the OpenAPI linters' recommended rules.
package api
