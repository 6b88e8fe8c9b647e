package migrations

// v13 keeps the failed calls to the gateway a runner reported, so the API
// can say why it was offline.
var v13 = steps(
	add("runners", &v13Runner{}, "ConnectionErrors"),
)

// v13Runner is the column v13 adds to runners (JSON, protocol.ConnectionError).
type v13Runner struct {
	ConnectionErrors string `gorm:"type:text"`
}
