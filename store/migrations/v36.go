package migrations

// v36 records each runner's platform ("linux_amd64"), which it reports at
// registration and with its heartbeats: builds vendor terraform providers
// for the platforms of an app's install runners.
var v36 = steps(
	add("runners", &v36Runner{}, "Platform"),
)

type v36Runner struct {
	Platform string `gorm:"size:40;not null;default:''"`
}
