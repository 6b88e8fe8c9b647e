// Package dashboard is the control plane's web dashboard: a page of plain ES
// modules (no build step), embedded in the binary and served under /ui/ by
// `outpost api` and `outpost dev`, which talks to the public API (/v1)
// alone. Its own routes are the assets and the session (/ui/session): an API
// token checked by the API and kept in an HttpOnly cookie that the API
// accepts, with a CSRF token for changes (docs/architecture/dashboard.md).
package dashboard
