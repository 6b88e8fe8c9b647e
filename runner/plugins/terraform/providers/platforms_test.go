package providers_test

import (
	"slices"
	"testing"

	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
)

// The build runner's own platform comes first, then the install runners'
// once each, sorted; what is not "<os>_<arch>" is left out.
func TestPlatformsFromTheInstallRunners(t *testing.T) {
	for _, c := range []struct {
		requested, want []string
	}{
		{nil, []string{"linux_amd64"}},
		{[]string{"linux_amd64"}, []string{"linux_amd64"}},
		{[]string{"linux_arm64", "darwin_arm64", "linux_arm64", "linux_amd64"}, []string{"linux_amd64", "darwin_arm64", "linux_arm64"}},
		{[]string{"", "Linux_ARM64", "linux", "linux_arm64/../x", "windows_amd64"}, []string{"linux_amd64", "windows_amd64"}},
	} {
		if got := providers.Platforms("linux_amd64", c.requested); !slices.Equal(got, c.want) {
			t.Errorf("Platforms(linux_amd64, %q) = %q, want %q", c.requested, got, c.want)
		}
	}
}
