package contract

// Operation kinds: the user-visible, mutating operations on an install,
// each run by its workflow (OperationWorkflows).
const (
	OpProvision         = "provision"
	OpDeprovision       = "deprovision"
	OpReprovision       = "reprovision"
	OpDeployComponent   = "deploy_component"
	OpTeardownComponent = "teardown_component"
	OpUpdateInputs      = "update_inputs"
	OpDeployConfig      = "deploy_config"
	// OpDriftCheck plans the sandbox and every terraform component without
	// taking the install's lock or terraform's state lock (docs: Drift).
	OpDriftCheck = "drift_check"
	// OpReconcileDrift applies what a drift check (its TriggeredBy) found
	// drifted, and what follows from it (docs: Drift).
	OpReconcileDrift = "reconcile_drift"
	// OpOfflineDeploy is an offline deploy's result, imported: it ran on an
	// air-gapped runner, no workflow runs it (docs/bundles.md).
	OpOfflineDeploy = "offline_deploy"
)

// Component types.
const (
	TypeTerraformModule = "terraform_module"
	TypeHelmChart       = "helm_chart"
	TypeContainerImage  = "container_image"
	TypeDockerBuild     = "docker_build"
)

// ComponentTypes are the component types Outpost knows.
var ComponentTypes = []string{TypeTerraformModule, TypeHelmChart, TypeContainerImage, TypeDockerBuild}

// DeploysImage says a component of this type is an image: copying its
// build into the install's registry is its whole deploy.
func DeploysImage(componentType string) bool {
	return componentType == TypeContainerImage || componentType == TypeDockerBuild
}
