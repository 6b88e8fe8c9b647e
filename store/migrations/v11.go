package migrations

// v11 records each step's dependencies (the steps it runs after), so the
// API can show an operation as the graph it runs.
var v11 = steps(
	add("install_steps", &v11Step{}, "After"),
)

// v11Step is the column v11 adds to install_steps.
type v11Step struct {
	After []string `gorm:"serializer:json;type:text"`
}
