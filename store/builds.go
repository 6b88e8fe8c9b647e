package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store/notify"
)

// Build is one component's source turned into an immutable OCI artifact in
// the vendor's registry by the org's build runner. A build is keyed by what
// it consumed (SourceDigest): a config version whose component did not change
// uses the build an earlier version made. The artifact fields are set only
// when the build succeeded, so a failed build never names an artifact.
type Build struct {
	ID            string `gorm:"primaryKey;size:32" json:"id"`
	OrgID         string `gorm:"size:32;not null;index" json:"-"`
	AppID         string `gorm:"size:32;not null;index:idx_builds_app_component" json:"app_id"`
	Component     string `gorm:"size:200;not null;index:idx_builds_app_component" json:"component"`
	ComponentType string `gorm:"size:40;not null" json:"component_type"`
	// ConfigVersion is the app config version that asked for the build.
	ConfigVersion int `json:"config_version"`
	// SourceDigest is the digest of what the build consumed
	// (appconfig.BuildInput.Digest).
	SourceDigest string       `gorm:"size:80;not null" json:"source_digest"`
	Status       status.Build `gorm:"size:20;not null" json:"status"`
	WorkflowID   string       `gorm:"size:300;not null" json:"workflow_id"`
	JobID        *string      `gorm:"size:32" json:"job_id,omitempty"`
	Repository   string       `gorm:"size:300;not null" json:"repository"`
	Tag          string       `gorm:"size:128;not null" json:"tag"`
	Digest       string       `gorm:"size:80" json:"digest,omitempty"`
	MediaType    string       `gorm:"size:200" json:"media_type,omitempty"`
	ArtifactType string       `gorm:"size:200" json:"artifact_type,omitempty"`
	Size         int64        `json:"size,omitempty"`
	Error        string       `gorm:"type:text" json:"error,omitempty"`
	// Provenance is how a docker_build image was made: its source digest,
	// build arguments and builder, as its manifest's annotations say.
	Provenance map[string]string `gorm:"serializer:json;type:text" json:"provenance,omitempty"`
	// Images are the images a helm_chart's build copied beside the chart
	// (relocate_images with a list), by digest.
	Images     []protocol.ArtifactImage `gorm:"serializer:json;type:text" json:"images,omitempty"`
	CreatedAt  time.Time                `json:"created_at"`
	FinishedAt *time.Time               `json:"finished_at,omitempty"`
}

// InstallComponent is which build an install's component runs: set when a
// deploy synced that build into the install's registry and applied it.
type InstallComponent struct {
	InstallID string `gorm:"primaryKey;size:32" json:"-"`
	Component string `gorm:"primaryKey;size:200" json:"component"`
	BuildID   string `gorm:"size:32;not null" json:"build_id"`
	// Digest and Reference are the artifact in the install's registry.
	Digest    string `gorm:"size:80;not null" json:"digest"`
	Reference string `gorm:"size:600;not null" json:"reference"`
	// ConfigVersion is the app config version the component was deployed
	// from (0 when deployed before it was recorded).
	ConfigVersion int       `gorm:"not null;default:0" json:"config_version"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Setting is a control-plane secret or setting shared by its processes.
type Setting struct {
	Name  string `gorm:"primaryKey;size:100"`
	Value string `gorm:"type:text;not null"`
}

// AppRepository is the vendor registry's repository of an app: one per
// app, inside its org's namespace ("<org id>/<app id>"), so a credential
// scoped to "<org id>/" covers every app of the org and nothing else.
func AppRepository(orgID, appID string) string { return orgID + "/" + appID }

// BuildSpec is a build to queue: a component of a config version and what
// its build consumes.
type BuildSpec struct {
	Component, ComponentType string
	SourceDigest             string
}

// QueueBuilds makes sure each component of an app config version has a
// build of its current source: one that succeeded or is under way is kept;
// otherwise (new or changed source, or only failed builds) a build is
// queued. It returns the builds to use, in the order of specs, and which of
// them it created (their workflows must be started).
func (s *Store) QueueBuilds(ctx context.Context, orgID, appID string, configVersion int, specs []BuildSpec) (builds []Build, created []bool, err error) {
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		// Serialise concurrent syncs of one app: lock its row.
		var app App
		if err := tx.Clauses(clause.Locking{Strength: "UPDATE"}).Where("org_id = ? AND id = ?", orgID, appID).First(&app).Error; err != nil {
			return notFound(err, "app "+appID)
		}
		for _, sp := range specs {
			var b Build
			err := tx.Where("app_id = ? AND component = ? AND source_digest = ? AND status <> ?", appID, sp.Component, sp.SourceDigest, status.BuildFailed).
				Order("created_at DESC").First(&b).Error
			switch {
			case err == nil:
				builds, created = append(builds, b), append(created, false)
				continue
			case !errors.Is(err, gorm.ErrRecordNotFound):
				return err
			}
			id := NewID("bld")
			b = Build{ID: id, OrgID: orgID, AppID: appID, Component: sp.Component, ComponentType: sp.ComponentType,
				ConfigVersion: configVersion, SourceDigest: sp.SourceDigest, Status: status.BuildQueued,
				WorkflowID: contract.BuildWorkflowID(appID, id), Repository: AppRepository(orgID, appID),
				Tag: sp.Component + "." + id, CreatedAt: s.now()}
			if err := tx.Create(&b).Error; err != nil {
				return fmt.Errorf("queue build of %s: %w", sp.Component, err)
			}
			builds, created = append(builds, b), append(created, true)
		}
		return nil
	})
	return builds, created, err
}

// GetBuild returns a build of the org.
func (s *Store) GetBuild(ctx context.Context, orgID, buildID string) (Build, error) {
	return first[Build](s.db.WithContext(ctx), "build "+buildID, "org_id = ? AND id = ?", orgID, buildID)
}

// GetBuildByID returns a build by its ID alone (workflows and activities).
func (s *Store) GetBuildByID(ctx context.Context, buildID string) (Build, error) {
	return first[Build](s.db.WithContext(ctx), "build "+buildID, "id = ?", buildID)
}

// BuildFilter narrows ListBuilds.
type BuildFilter struct {
	Component string
}

// ListBuilds lists an app's builds, newest first.
func (s *Store) ListBuilds(ctx context.Context, orgID, appID string, f BuildFilter) ([]Build, error) {
	q := s.db.WithContext(ctx).Where("org_id = ? AND app_id = ?", orgID, appID)
	if f.Component != "" {
		q = q.Where("component = ?", f.Component)
	}
	var out []Build
	err := q.Order("created_at DESC").Order("id").Find(&out).Error
	return out, err
}

// FindBuild returns the build to deploy for a component whose source has
// the digest: the newest one that succeeded or is under way (ErrNotFound
// when there is none, or only failed ones: then the latest failure is
// returned with it).
func (s *Store) FindBuild(ctx context.Context, appID, component, sourceDigest string) (Build, error) {
	var b Build
	err := s.db.WithContext(ctx).Where("app_id = ? AND component = ? AND source_digest = ?", appID, component, sourceDigest).
		Order("CASE WHEN status = 'failed' THEN 1 ELSE 0 END").Order("created_at DESC").First(&b).Error
	if err != nil {
		return Build{}, notFound(err, "build of "+component)
	}
	if b.Status == status.BuildFailed {
		return b, fmt.Errorf("build of %s: only failed builds (latest %s: %s): %w", component, b.ID, b.Error, ErrNotFound)
	}
	return b, nil
}

// StartBuild records the build's job and marks it running.
func (s *Store) StartBuild(ctx context.Context, buildID, jobID string) error {
	res := update(s.db.WithContext(ctx).Where("id = ? AND status IN ?", buildID, []status.Build{status.BuildQueued, status.BuildRunning}),
		&Build{JobID: &jobID, Status: status.BuildRunning}, "JobID", "Status")
	if res.Error != nil {
		return res.Error
	}
	return s.publishBuild(ctx, buildID)
}

// BuildArtifact is what a successful build produced.
type BuildArtifact struct {
	Digest, MediaType, ArtifactType string
	Size                            int64
	Provenance                      map[string]string
	Images                          []protocol.ArtifactImage
}

// FinishBuild records a build's end: its artifact when it succeeded, its
// error when not. A build ends once; a second call changes nothing.
func (s *Store) FinishBuild(ctx context.Context, buildID string, art *BuildArtifact, errMsg string) error {
	row, fields := Build{Status: status.BuildFailed, Error: errMsg, FinishedAt: new(s.now())}, []string{"Status", "Error", "FinishedAt"}
	if art != nil {
		row = Build{Status: status.BuildSucceeded, FinishedAt: row.FinishedAt, Digest: art.Digest, MediaType: art.MediaType,
			ArtifactType: art.ArtifactType, Size: art.Size, Provenance: art.Provenance, Images: art.Images}
		fields = append(fields, "Digest", "MediaType", "ArtifactType", "Size", "Provenance", "Images")
	}
	if len(row.Provenance) == 0 {
		row.Provenance = nil // none: NULL
	}
	if len(row.Images) == 0 {
		row.Images = nil
	}
	res := update(s.db.WithContext(ctx).Where("id = ? AND status IN ?", buildID, []status.Build{status.BuildQueued, status.BuildRunning}), &row, fields...)
	if res.Error != nil {
		return res.Error
	}
	return s.publishBuild(ctx, buildID)
}

func (s *Store) publishBuild(ctx context.Context, buildID string) error {
	if err := s.bus.Publish(ctx, notify.BuildTopic(buildID)); err != nil {
		return fmt.Errorf("notify build %s: %w", buildID, err)
	}
	return nil
}

// SubscribeBuild wakes the caller when the build changes status.
func (s *Store) SubscribeBuild(buildID string) (<-chan struct{}, func()) {
	return s.bus.Subscribe(notify.BuildTopic(buildID))
}

// SetInstallComponent records which build an install's component runs.
func (s *Store) SetInstallComponent(ctx context.Context, ic InstallComponent) error {
	ic.UpdatedAt = s.now()
	return s.db.WithContext(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(&ic).Error
}

// DeleteInstallComponent forgets a torn-down component's build.
func (s *Store) DeleteInstallComponent(ctx context.Context, installID, component string) error {
	return s.db.WithContext(ctx).Where("install_id = ? AND component = ?", installID, component).Delete(&InstallComponent{}).Error
}

// ListInstallComponents lists which build each of the install's components
// runs, by component name.
func (s *Store) ListInstallComponents(ctx context.Context, installID string) ([]InstallComponent, error) {
	var out []InstallComponent
	err := s.db.WithContext(ctx).Where("install_id = ?", installID).Order("component").Find(&out).Error
	return out, err
}
