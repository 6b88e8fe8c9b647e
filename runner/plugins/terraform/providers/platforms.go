package providers

import (
	"slices"

	"github.com/outpost-dev/outpost/protocol"
)

// Platforms are the platforms a build vendors providers for: own (the
// build runner's, which its terraform init installs) first, then the
// requested ones (the manifest's: the app's install runners'), each once,
// sorted; names that are not "<os>_<arch>" are left out.
func Platforms(own string, requested []string) []string {
	var others []string
	for _, p := range requested {
		if p != own && protocol.ValidPlatform(p) && !slices.Contains(others, p) {
			others = append(others, p)
		}
	}
	slices.Sort(others)
	return append([]string{own}, others...)
}
