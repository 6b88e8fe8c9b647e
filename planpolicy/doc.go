// Package planpolicy checks a plan against plan policies (policy as code):
// Rego v1 modules, evaluated with OPA (github.com/open-policy-agent/opa), each
// package a policy whose `deny` rule stops the plan and whose `warn` rule is
// shown.
//
// Two sets of policies apply to every plan a runner makes: the vendor's,
// from the app config's policies/*.rego and carried in the job's manifest,
// and the customer's, read by the runner from its own directory. Each set is
// compiled and evaluated on its own, so no vendor module can define, shadow
// or read a customer's rule. Policies run with no network or environment
// builtins (http.send, net.lookup_ip_addr, opa.runtime): a policy sees the
// plan and nothing else, and can send none of it anywhere.
//
// The control plane uses Parse to check the vendor's modules when an app
// config is synced (a problem names the file and line); the runner's plugins
// use Check. The input a policy sees is described in
// schemas/plan-policy-input.schema.json and docs/architecture/policies.md.
//
// This package links OPA and the protocol package only: the runner imports it,
// and the runner's dependency fence holds.
package planpolicy
