package migrations

// v12 records how a docker_build image was made (source digest, build
// arguments, builder) on its build.
var v12 = steps(
	add("builds", &v12Build{}, "Provenance"),
)

// v12Build is the column v12 adds to builds.
type v12Build struct {
	Provenance map[string]string `gorm:"serializer:json;type:text"`
}
