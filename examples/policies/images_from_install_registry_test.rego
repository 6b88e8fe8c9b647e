package outpost.images_from_install_registry_test

import data.outpost.images_from_install_registry as images

pod(image) := {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": image}]}}

test_foreign_image_denied if {
	msgs := images.deny with input as {"install": {"registry": "reg.local:5000"}, "manifests": [pod("docker.io/library/nginx:1")]}
	msgs == {"Pod/p: image docker.io/library/nginx:1 is not from the install's registry reg.local:5000"}
}

test_install_image_passes if {
	count(images.deny) == 0 with input as {"install": {"registry": "reg.local:5000"}, "manifests": [pod("reg.local:5000/outpost/web@sha256:ab")]}
}

test_registry_prefix_is_not_enough if {
	count(images.deny) == 1 with input as {"install": {"registry": "reg.local:5000"}, "manifests": [pod("reg.local:50001/web:1")]}
}

test_unknown_registry_warns if {
	msgs := images.warn with input as {"install": {}, "manifests": [pod("nginx")]}
	msgs == {"the install's registry is not known: images were not checked"}
}
