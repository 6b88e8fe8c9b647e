package protocol

import "regexp"

// platformPattern is terraform's platform name: "<os>_<arch>", each a
// lowercase Go name (linux_amd64, darwin_arm64).
var platformPattern = regexp.MustCompile(`^[a-z0-9]+_[a-z0-9]+$`)

// ValidPlatform: p is a platform as terraform names them ("linux_amd64").
func ValidPlatform(p string) bool {
	return len(p) <= 40 && platformPattern.MatchString(p)
}
