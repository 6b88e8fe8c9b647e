# No privileged container, and no container sharing the host's namespaces,
# in a chart's rendered manifests.
package outpost.no_privileged_pod

pod_spec(obj) := obj.spec if obj.kind == "Pod"

pod_spec(obj) := obj.spec.template.spec if obj.kind in {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec(obj) := obj.spec.jobTemplate.spec.template.spec if obj.kind == "CronJob"

containers(spec) := array.concat(object.get(spec, "containers", []), object.get(spec, "initContainers", []))

deny contains msg if {
	some obj in input.manifests
	some c in containers(pod_spec(obj))
	c.securityContext.privileged == true
	msg := sprintf("%s/%s: container %s is privileged", [obj.kind, obj.metadata.name, c.name])
}

deny contains msg if {
	some obj in input.manifests
	spec := pod_spec(obj)
	some field in ["hostNetwork", "hostPID", "hostIPC"]
	spec[field] == true
	msg := sprintf("%s/%s: %s is set", [obj.kind, obj.metadata.name, field])
}
