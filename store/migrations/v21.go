package migrations

// v21 keeps, on each step, what the plan policies said of its plan
// (protocol.PolicyResult JSON; empty when no policy ran).
var v21 = steps(
	add("install_steps", &v21InstallStep{}, "Policies"),
)

// v21InstallStep is the column v21 adds to install_steps.
type v21InstallStep struct {
	Policies string `gorm:"type:text;not null;default:''"`
}
