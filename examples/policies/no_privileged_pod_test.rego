package outpost.no_privileged_pod_test

import data.outpost.no_privileged_pod

deployment(container, extra) := {"kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": {"spec": object.union({"containers": [container]}, extra)}}}

test_privileged_container_denied if {
	msgs := no_privileged_pod.deny with input as {"manifests": [deployment({"name": "app", "securityContext": {"privileged": true}}, {})]}
	msgs == {"Deployment/web: container app is privileged"}
}

test_host_network_denied if {
	msgs := no_privileged_pod.deny with input as {"manifests": [deployment({"name": "app"}, {"hostNetwork": true})]}
	msgs == {"Deployment/web: hostNetwork is set"}
}

test_plain_pod_passes if {
	count(no_privileged_pod.deny) == 0 with input as {"manifests": [
		{"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "securityContext": {"privileged": false}}]}},
		{"kind": "Service", "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}},
	]}
}
