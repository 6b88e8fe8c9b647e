package migrations

// v31 adds health-gated releases: a release's soak (how long a batch must
// stay healthy after its deploys) and what an unhealthy batch does (halt or
// rollback), and the operation that rolled a release's install back.
var v31 = steps(
	add("releases", &v31Release{}, "SoakMS", "OnUnhealthy"),
	add("release_installs", &v31ReleaseInstall{}, "RollbackOperationID"),
)

type v31Release struct {
	SoakMS      int64  `gorm:"not null;default:0"`
	OnUnhealthy string `gorm:"size:20;not null;default:''"`
}

type v31ReleaseInstall struct {
	RollbackOperationID string `gorm:"size:32;not null;default:''"`
}
