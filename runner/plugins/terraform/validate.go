package terraform

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (p *plugin) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.m); err != nil {
		return err
	}
	m := &p.m
	p.secrets = plugins.NewSecrets(m.Scrub...)
	switch m.Operation {
	case protocol.TerraformPlan, protocol.TerraformApply, protocol.TerraformOutputs, protocol.TerraformPlanApply:
	case "":
		return errors.New("operation: required (plan, apply, plan_apply or outputs)")
	default:
		return fmt.Errorf("operation: must be plan, apply, plan_apply or outputs, got %q", m.Operation)
	}
	switch {
	case m.Destroy && !m.plans():
		return errors.New("destroy: only a plan (or plan_apply) can be a destroy plan (an apply applies the plan it is given)")
	case m.Workspace == "":
		return errors.New("workspace: required")
	case m.ModuleSync != nil && m.Operation != protocol.TerraformPlanApply:
		return fmt.Errorf("module_sync: only a plan_apply job syncs its module, not a %s", m.Operation)
	case m.ModuleSync != nil && (len(m.Module) > 0 || m.ModuleArtifact != nil):
		return errors.New("module_sync: give the module, module_artifact or module_sync, not two of them")
	case m.ModuleSync != nil && !validRef(m.ModuleSync.Source):
		return errors.New("module_sync.source: needs registry.address, repository and a sha256 digest")
	case m.ModuleSync != nil && m.ModuleSync.Destination.Repository == "":
		return errors.New("module_sync.destination.repository: required")
	case m.ModuleSync == nil && len(m.Module) == 0 && m.ModuleArtifact == nil:
		return errors.New("module: required (the module directory as a gzipped tar archive), or module_artifact or module_sync")
	case len(m.Module) > 0 && m.ModuleArtifact != nil:
		return errors.New("module_artifact: give the module or module_artifact, not both")
	case m.ModuleArtifact != nil && !validRef(*m.ModuleArtifact):
		return errors.New("module_artifact: needs registry.address, repository and a sha256 digest")
	case m.Operation == protocol.TerraformApply && len(m.PlanFile) == 0:
		return errors.New("plan_file: required for an apply (the saved plan to apply)")
	case m.Operation != protocol.TerraformApply && len(m.PlanFile) > 0:
		return fmt.Errorf("plan_file: only an apply takes a plan file, not a %s", m.Operation)
	}
	if err := validateBackend(m.Backend); err != nil {
		return err
	}
	if err := validateVariables(m.Variables); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(m.Env)) {
		switch {
		case !envName.MatchString(name):
			return fmt.Errorf("env.%s: not a valid environment variable name", name)
		case protocol.TerraformRunnerEnv(name) != "":
			return fmt.Errorf("env.%s: %s", name, protocol.TerraformRunnerEnv(name))
		case len(tfexec.ProhibitedEnv(map[string]string{name: ""})) > 0:
			return fmt.Errorf("env.%s: terraform-exec sets this itself; variables go in variables", name)
		}
	}
	return nil
}

// validRef: an artifact reference names a registry, a repository and a
// sha256 digest.
func validRef(r protocol.ArtifactRef) bool {
	return r.Registry.Address != "" && r.Repository != "" && strings.HasPrefix(r.Digest, "sha256:")
}

func validateBackend(b protocol.TerraformBackend) error {
	for _, f := range []struct{ name, value string }{
		{"backend.address", b.Address}, {"backend.lock_address", b.LockAddress}, {"backend.unlock_address", b.UnlockAddress},
	} {
		u, err := url.Parse(f.value)
		switch {
		case f.value == "":
			return fmt.Errorf("%s: required", f.name)
		case err != nil:
			return fmt.Errorf("%s: %w", f.name, err)
		case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			return fmt.Errorf("%s: must be an http(s) URL, got %q", f.name, f.value)
		case u.User != nil:
			return fmt.Errorf("%s: must not hold a user or password (they are backend.username and backend.password)", f.name)
		}
	}
	if b.Password == "" {
		return errors.New("backend.password: required (the job's state credential)")
	}
	return nil
}

// validateVariables checks the variables' names.
func validateVariables(vars map[string]json.RawMessage) error {
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		if !identifier.MatchString(name) {
			return fmt.Errorf("variables.%s: not a valid terraform variable name", name)
		}
	}
	return nil
}
