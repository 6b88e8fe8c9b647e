package bench.secret_outputs

deny contains sprintf("output %s looks secret but is not sensitive", [name]) if {
	some name, out in input.terraform.configuration.root_module.outputs
	regex.match(`(?i)(password|secret|token)`, name)
	not out.sensitive
}
