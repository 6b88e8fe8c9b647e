// Package httpserver builds the http.Server of the API and the gateway with
// the limits that keep a slow or hostile client from holding its connections:
// how long headers, a whole request and an answer may take, how long an idle
// keep-alive connection stays, how large the headers may be
// (docs/architecture/api.md, "Abuse").
package httpserver
