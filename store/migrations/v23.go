package migrations

// v23 records a deprovision that forgets what it cannot destroy (forget on
// the operation) and, on each step it could not destroy, what that step
// left behind (JSON list of resources; empty when nothing was).
var v23 = steps(
	add("install_operations", &v23InstallOperation{}, "Forget"),
	add("install_steps", &v23InstallStep{}, "LeftBehind"),
)

// v23InstallOperation is the column v23 adds to install_operations.
type v23InstallOperation struct {
	Forget bool `gorm:"not null;default:false"`
}

// v23InstallStep is the column v23 adds to install_steps.
type v23InstallStep struct {
	LeftBehind string `gorm:"type:text;not null;default:''"`
}
