// Package providers vendors a terraform module's providers into its build
// and installs them from there.
//
// At build (Vendor), the build runner's terraform runs "init -backend=false"
// in the module with the build runner's CLI configuration, so the providers
// come from the source the vendor configured there (the public registry, a
// network mirror, a filesystem mirror); what init installed and the
// ".terraform.lock.hcl" it wrote are packed as the artifact's providers
// layer (protocol.MediaTypeTerraformProvidersLayer): a gzipped tar holding
// "plugins/<host>/<namespace>/<type>/<version>/<os>_<arch>/…" (terraform's
// unpacked plugin layout) and the lock file, with times zeroed and entries in
// lexical order, so the same providers give the same bytes. The build
// runner's platform's come from init; those of the other platforms the job
// names (OCIManifest.Platforms: the app's install runners') from the
// filesystem mirrors of the build runner's CLI configuration (unpacked or
// packed: "terraform providers mirror -platform=…" writes the latter), and
// "terraform providers lock -fs-mirror -platform=…" adds their hashes to
// the lock file. A platform whose providers no mirror holds fails the build.
//
// At install (Unpack), the layer is extracted into the job's directory and
// the lock file copied into the module; the runner then runs
// "init -plugin-dir=<its plugins/>", which contacts no registry, takes its
// own platform's and checks them against the lock file's hashes. A layer
// with no provider for the runner's platform fails the job, naming the
// platforms it holds.
package providers
