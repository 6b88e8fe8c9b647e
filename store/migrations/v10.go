package migrations

// v10 names, on an operation the platform started, the operation that
// started it (a reconcile_drift's drift check).
var v10 = steps(
	add("install_operations", &v10Operation{}, "TriggeredBy"),
)

// v10Operation is the column v10 adds to install_operations.
type v10Operation struct {
	TriggeredBy string `gorm:"size:32;not null;default:''"`
}
