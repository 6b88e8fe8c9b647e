package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"

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
	all, err := d.b.loadAll(ctx, reg)
	if err != nil {
		return err
	}
	st.Outputs = map[string]any{}
	for _, l := range all {
		st.Log += fmt.Sprintf("outpost: loaded %s (%s, %d bytes) into %s\n", l.component, l.artifact.Digest, l.artifact.Size, l.name)
		st.Outputs[l.component] = l.name + "@" + l.artifact.Digest
	}
	return nil
}

// loaded is one artifact of the bundle as the install's registry serves it.
type loaded struct {
	component, name string
	artifact        protocol.Artifact
}

// loadAll loads every artifact into reg, several at once (each blob is
// hashed by the registry as it arrives, which one core alone makes the
// bound), and answers them in the components' order.
func (b *bundle) loadAll(ctx context.Context, reg protocol.RegistryAccess) ([]loaded, error) {
	components := slices.Sorted(maps.Keys(b.artifacts))
	out := make([]loaded, len(components))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(ociclient.Concurrency)
	for i, c := range components {
		g.Go(func() error {
			name, a, err := b.load(ctx, reg, c)
			out[i] = loaded{component: c, name: name, artifact: a}
			return err
		})
	}
	return out, g.Wait()
}

// load copies component c's artifact into reg's outpost/<c> and returns
// the repository's name and the artifact as the registry serves it.
func (b *bundle) load(ctx context.Context, reg protocol.RegistryAccess, c string) (string, protocol.Artifact, error) {
	desc := b.artifacts[c]
	t, err := ociclient.NewTarget(protocol.OCIDestination{Registry: reg, Repository: jobmanifest.RepositoryPrefix + c})
	if err != nil {
		return "", protocol.Artifact{}, err
	}
	if err := t.Copy(ctx, b.store, desc); err != nil {
		return "", protocol.Artifact{}, fmt.Errorf("component %s: %w", c, err)
	}
	a, err := t.Finish(ctx, desc.Digest.String(), "")
	if err != nil {
		return "", protocol.Artifact{}, fmt.Errorf("component %s: %w", c, err)
	}
	return t.Name, a, nil
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
