package outpost.no_destroy_in_prod_test

import data.outpost.no_destroy_in_prod

plan(labels, actions) := {"kind": "terraform_plan", "install": {"id": "ins_1", "labels": labels}, "terraform": {"resource_changes": [{"address": "terraform_data.db", "change": {"actions": actions}}]}}

test_destroy_in_prod_denied if {
	msgs := no_destroy_in_prod.deny with input as plan({"env": "prod"}, ["delete"])
	msgs == {"terraform_data.db would be destroyed in a production install"}
}

test_replace_in_prod_denied if {
	count(no_destroy_in_prod.deny) == 1 with input as plan({"env": "prod"}, ["delete", "create"])
}

test_destroy_elsewhere_passes if {
	count(no_destroy_in_prod.deny) == 0 with input as plan({"env": "staging"}, ["delete"])
}

test_update_in_prod_passes if {
	count(no_destroy_in_prod.deny) == 0 with input as plan({"env": "prod"}, ["update"])
}

test_uninstall_in_prod_denied if {
	msgs := no_destroy_in_prod.deny with input as {"kind": "helm_manifests", "step": "web", "destroy": true, "install": {"labels": {"env": "prod"}}, "manifests": []}
	msgs == {"web would be uninstalled from a production install"}
}
