# Nothing is destroyed in an install labelled env=prod: no terraform plan that
# deletes or replaces a resource, no chart uninstalled.
package outpost.no_destroy_in_prod

prod if input.install.labels.env == "prod"

deny contains msg if {
	prod
	some rc in input.terraform.resource_changes
	"delete" in rc.change.actions
	msg := sprintf("%s would be destroyed in a production install", [rc.address])
}

deny contains msg if {
	prod
	input.kind == "helm_manifests"
	input.destroy
	msg := sprintf("%s would be uninstalled from a production install", [input.step])
}
