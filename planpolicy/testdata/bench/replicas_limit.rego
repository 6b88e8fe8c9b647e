package bench.replicas_limit

deny contains sprintf("replicas = %d: at most 10", [n]) if {
	n := input.terraform.variables.replicas.value
	n > 10
}
