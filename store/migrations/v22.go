package migrations

// v22 records the API's decision on a step's plan: the workflow applies a
// plan only when the store holds an approval.
var v22 = steps(
	add("install_steps", &v22InstallStep{}, "Decision"),
)

// v22InstallStep is the column v22 adds to install_steps.
type v22InstallStep struct {
	Decision string `gorm:"size:20;not null;default:''"`
}
