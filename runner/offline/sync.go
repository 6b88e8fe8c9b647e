package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/outpost-dev/outpost/contract/status"
	"github.com/outpost-dev/outpost/jobmanifest"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
)

// sync loads every artifact of the bundle into the install's registry (its
// sandbox's outputs name it), by digest into outpost/<component>, as the
// connected module and image syncs copy builds from the vendor's registry:
// each blob checked against its digest by the registry, what it holds
// already skipped.
func (d *deployment) sync(ctx context.Context, st *protocol.OfflineStep) error {
	if len(d.b.artifacts) == 0 {
		st.Log = "outpost: the bundle holds no build\n"
		return nil
	}
	sandbox, err := d.sandboxOutputs()
	if err != nil {
		return err
	}
	reg, err := jobmanifest.InstallRegistry(sandbox)
	if err != nil {
		return err
	}
	d.registry = &reg
	st.Outputs = map[string]any{}
	for _, c := range slices.Sorted(maps.Keys(d.b.artifacts)) {
		desc := d.b.artifacts[c]
		t, err := ociclient.NewTarget(protocol.OCIDestination{Registry: reg, Repository: jobmanifest.RepositoryPrefix + c})
		if err != nil {
			return err
		}
		if err := t.Copy(ctx, d.b.store, desc); err != nil {
			return fmt.Errorf("component %s: %w", c, err)
		}
		a, err := t.Finish(ctx, desc.Digest.String(), "")
		if err != nil {
			return fmt.Errorf("component %s: %w", c, err)
		}
		st.Log += fmt.Sprintf("outpost: loaded %s (%s, %d bytes) into %s\n", c, a.Digest, a.Size, t.Name)
		st.Outputs[c] = t.Name + "@" + a.Digest
		d.loaded[c] = t.Name
	}
	return nil
}

// sandboxOutputs are the sandbox's outputs as recorded (none before it ran).
func (d *deployment) sandboxOutputs() (map[string]protocol.TerraformOutput, error) {
	var sb protocol.TerraformApplyOutputs
	if raw, ok := d.outputs[status.SandboxStep]; ok {
		if err := json.Unmarshal([]byte(raw), &sb); err != nil {
			return nil, fmt.Errorf("the sandbox's outputs: %w", err)
		}
	}
	return sb.Outputs, nil
}
