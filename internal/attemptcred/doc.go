// Package attemptcred gives each claimed job attempt credentials of its own.
//
// The control plane renders a job's manifest when it queues the job, long
// before any attempt exists, so a manifest carries placeholders where an
// attempt's credentials go: State for the terraform state backend's
// password, Registry for a vendor-registry password with its subject and
// scopes. Each is signed with its org's signing key (store.SigningKey),
// whose ID it carries, and names the job's org, so
// text a user or a customer's terraform wrote into a manifest (an input, an
// output) can never ask for a credential: Fill leaves a string that is not
// the control plane's own placeholder for that org as it is. When the gateway
// hands an attempt to a runner, Fill replaces each with a credential bound to
// that job and attempt. The state backend and the
// vendor registry accept it only while the attempt holds its lease, so a lost,
// completed or cancelled attempt's credentials stop working, and a retried
// attempt gets new ones. Stored manifests hold no live credential.
package attemptcred
