package bench.provisioners

warn contains sprintf("%s runs a local-exec provisioner", [r.address]) if {
	some r in input.terraform.configuration.root_module.resources
	some p in object.get(r, "provisioners", [])
	p.type == "local-exec"
	input.install.labels.env == "prod"
}
