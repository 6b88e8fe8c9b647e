package bench.keep_databases

deny contains sprintf("%s holds data and would be destroyed", [rc.address]) if {
	some rc in input.terraform.resource_changes
	contains(rc.address, "database")
	"delete" in rc.change.actions
	not input.destroy
}
