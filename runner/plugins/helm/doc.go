// Package helm is the plugin of the "helm" job type: it runs helm (the
// helm.sh/helm/v3 SDK, no helm binary) on one release of a chart in the
// install's cluster. helm keeps the release in the cluster, as Secrets in the
// release's namespace (helm's "secret" storage driver), so the runner keeps
// nothing.
//
// A job (protocol.HelmManifest) is one operation:
//
//   - deploy: install the release, or upgrade it when a revision of it is
//     deployed, with the manifest's values only (nothing is reused from the
//     previous revision). It is atomic: a failed install is uninstalled and a
//     failed upgrade rolled back to the deployed revision, so no half-done
//     release stays; a template that does not render changes nothing at all.
//     helm's own Atomic would also wait for every object to be ready; here
//     only the manifest's wait asks for that, since readiness needs a
//     kubelet, and the API server's acceptance is enough otherwise. A revision
//     left pending by an interrupted attempt is marked failed first (the
//     runner never runs two attempts of a job at once). The outputs
//     (protocol.HelmReleaseOutputs) are the release, its revision and status,
//     and the objects of its manifest.
//   - plan: a server-side dry run of the same install or upgrade, whose
//     objects are compared with the deployed revision's manifest. The outputs
//     (protocol.HelmPlanOutputs) say whether anything changes, which objects
//     are added, changed and removed, and hold a unified diff per object (of
//     the objects as YAML with sorted keys, so that only content counts; the
//     values of Secrets show as "(sensitive value)"). It then compares the
//     deployed revision's objects with the cluster's live ones, as kubectl
//     diff does (a dry-run forced server-side apply of each, as its own field
//     manager, against the live object less the API server's bookkeeping):
//     an object edited or deleted behind helm's back is drift, in Drifted and
//     the diff, and a change; a field the release does not set is not. A
//     deploy after an upgrade server-side applies what helm's merge left
//     drifted (custom resources, which helm merges two-way). A plan of a release
//     left pending by an interrupted attempt fails with helm's message; a
//     deploy recovers it.
//   - uninstall: remove every revision of the release and its objects
//     (protocol.HelmUninstallOutputs). A release that does not exist is
//     nothing to do: teardown is idempotent. The namespace stays.
//
// The chart is an OCI artifact pulled by digest with helm's registry client
// (the manifest's credential only: helm's credentials file is an empty one in
// the job's directory), or a gzipped tar of the chart directory in the
// manifest (tests, local use). Values are the values files, merged in order,
// then the values object, over the chart's values.yaml.
//
// With the manifest's images (protocol.HelmImages), a post-renderer points
// the images of the rendered pod specs (containers, initContainers,
// ephemeralContainers, at any depth) at the install's registry by digest; a
// deploy first copies each there (images.go, postrender.go), a dry run only
// resolves it.
//
// The kubeconfig stays in memory (it is never written to disk). Its
// credentials, the registry's password and the values the manifest marks
// sensitive (sensitive_values) are replaced by "(sensitive value)" in every
// log line, error, diff and the chart's notes. helm's log goes to the job's logs;
// a failure is helm's own message ("parse error at (mychart/templates/x.yaml:3):
// …", the API server's refusal) with what the plugin did about it.
package helm
