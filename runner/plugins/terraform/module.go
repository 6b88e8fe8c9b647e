package terraform

import (
	"errors"
	"fmt"
	"strings"

	"github.com/outpost-dev/outpost/internal/tarball"
)

// moduleLimits bound a module archive, so a bad one cannot fill the
// runner's disk.
var moduleLimits = tarball.Limits{Files: 20_000, Bytes: 512 << 20, Root: "the module directory"}

// extractModule unpacks a gzipped tar archive of a module directory into
// dir. Only directories and regular files are accepted, at relative paths
// inside dir; file modes keep their executable bits.
func extractModule(archive []byte, dir string) error {
	if err := tarball.Extract(archive, dir, moduleLimits); err != nil {
		return fmt.Errorf("module: %w", err)
	}
	rootTF, err := tarball.HasRootFile(archive, moduleLimits, func(name string) bool {
		return strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")
	})
	if err != nil {
		return fmt.Errorf("module: %w", err)
	}
	if !rootTF {
		return errors.New("module: the archive holds no .tf or .tf.json file at its root")
	}
	return nil
}
