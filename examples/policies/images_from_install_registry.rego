# Every container image a chart runs comes from the install's own registry,
# so that the install never depends on anyone else's.
package outpost.images_from_install_registry

pod_spec(obj) := obj.spec if obj.kind == "Pod"

pod_spec(obj) := obj.spec.template.spec if obj.kind in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec(obj) := obj.spec.jobTemplate.spec.template.spec if obj.kind == "CronJob"

deny contains msg if {
	input.install.registry
	some obj in input.manifests
	spec := pod_spec(obj)
	some c in array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", []))
	not startswith(c.image, concat("", [input.install.registry, "/"]))
	msg := sprintf("%s/%s: image %s is not from the install's registry %s", [obj.kind, obj.metadata.name, c.image, input.install.registry])
}

warn contains msg if {
	not input.install.registry
	count(input.manifests) > 0
	msg := "the install's registry is not known: images were not checked"
}
