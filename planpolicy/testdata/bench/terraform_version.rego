package bench.terraform_version

warn contains sprintf("terraform %s is older than 1.5", [v]) if {
	v := input.terraform.terraform_version
	semver.compare(v, "1.5.0") < 0
}
