package migrations

// v37 records the images a helm_chart's build copied beside the chart
// (relocate_images with a list), which a bundle export carries.
var v37 = steps(
	add("builds", &v37Build{}, "Images"),
)

// v37Build is the column v37 adds to builds: a JSON list.
type v37Build struct {
	Images []v37Image `gorm:"serializer:json;type:text"`
}

type v37Image struct {
	Reference, Repository, Digest string
	Size                          int64
}
