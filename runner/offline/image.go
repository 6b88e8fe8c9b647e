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
	a, err := d.artifact(st.Component)
	if err != nil {
		return err
	}
	repo := a.Registry.Address + "/" + a.Repository
	st.Log += fmt.Sprintf("outpost: %s runs %s@%s\n", st.Component, repo, a.Digest)
	return d.recordValues(st, appconfig.ImageOutputValues(repo, a.Digest))
}
