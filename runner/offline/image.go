package offline

import (
	"fmt"

	"github.com/outpost-dev/outpost/appconfig"
	"github.com/outpost-dev/outpost/protocol"
)

// image deploys a container_image or docker_build component: as connected,
// its build's copy into the install's registry (the sync step's) is the
// deploy, and its outputs say where it is, by digest.
func (d *deployment) image(st *protocol.OfflineStep) error {
	repo, ok := d.loaded[st.Component]
	if !ok {
		return fmt.Errorf("component %s: the bundle holds no build of it", st.Component)
	}
	digest := d.b.artifacts[st.Component].Digest.String()
	st.Log += fmt.Sprintf("outpost: %s runs %s@%s\n", st.Component, repo, digest)
	return d.recordValues(st, appconfig.ImageOutputValues(repo, digest))
}
