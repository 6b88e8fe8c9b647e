package terraform

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/outpost-dev/outpost/runner/plugins/terraform/providers"
	"github.com/outpost-dev/outpost/runner/plugins/toolpath"
)

// EnvTerraform names the terraform binary: the runner's --terraform flag,
// and the variable through which the runner hands the binary it found to its
// jobs.
const EnvTerraform = providers.EnvTerraform

// ToolsVersion is the terraform version the project builds (scripts/tools.sh)
// when no terraform is found.
const ToolsVersion = "1.5.7"

// ToolsPath is where scripts/tools.sh puts it, relative to the repository
// root.
var ToolsPath = filepath.Join(".tools", "terraform", ToolsVersion, "terraform")

// ErrNotFound: no terraform binary was found.
var ErrNotFound = errors.New("no terraform binary found")

// Find returns the absolute path of the terraform binary to use:
//
//  1. configured, when set: a path, or a name looked up on pathList;
//  2. "terraform" on pathList (a PATH value);
//  3. ToolsPath in dir or one of its parents.
//
// A configured binary that is missing is an error, not a reason to look
// elsewhere.
func Find(configured, pathList, dir string) (string, error) {
	if configured != "" {
		if strings.ContainsRune(configured, filepath.Separator) {
			if err := toolpath.Executable(configured); err != nil {
				return "", fmt.Errorf("terraform binary %s (%s): %w", configured, EnvTerraform, err)
			}
			return filepath.Abs(configured)
		}
		if p, ok := lookPath(configured, pathList); ok {
			return p, nil
		}
		return "", fmt.Errorf("terraform binary %q (%s): not found on PATH", configured, EnvTerraform)
	}
	if p, ok := lookPath("terraform", pathList); ok {
		return p, nil
	}
	p, ok, err := toolpath.InParents(dir, ToolsPath, func(p string) bool { return toolpath.Executable(p) == nil })
	if err != nil {
		return "", err
	}
	if ok {
		return p, nil
	}
	return "", fmt.Errorf("%w: set --terraform (%s), put terraform on PATH, or run scripts/tools.sh in the repository to build v%s into %s",
		ErrNotFound, EnvTerraform, ToolsVersion, ToolsPath)
}

func lookPath(name, pathList string) (string, bool) {
	for _, d := range filepath.SplitList(pathList) {
		if d == "" || !filepath.IsAbs(d) {
			continue // like exec.LookPath, never the working directory
		}
		p := filepath.Join(d, name)
		if toolpath.Executable(p) == nil {
			return p, true
		}
	}
	return "", false
}
