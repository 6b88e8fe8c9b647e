package terraform

import (
	"context"
	"errors"
	"fmt"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/ociclient"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// fetchModule fetches the module archive the manifest does not carry: from the install's
// registry (module_artifact) or, for a module_sync, from the build's source, syncing it
// meanwhile (see the package doc, "Module sync").
func (p *plugin) fetchModule(ctx context.Context, run plugins.Run) error {
	m := &p.m
	s := m.ModuleSync
	switch {
	case s == nil && m.ModuleArtifact == nil:
		return nil
	case s == nil:
		return p.fetch(ctx, run, *m.ModuleArtifact, "module_artifact")
	case s.Destination.Registry.Address != "":
		p.syncing = make(chan error, 1)
		go func() { p.syncing <- p.syncModule(ctx, run, nil) }()
		if err := p.fetch(ctx, run, s.Source, "module_sync.source"); err != nil {
			fmt.Fprintf(run.Stdout, "outpost: %v: it is fetched from the install's registry\n", err)
			if err := p.joinSync(); err != nil {
				return err
			}
			return p.fetchSynced(ctx, run)
		}
		return nil
	case run.Inputs == nil:
		return errors.New("module_sync.destination.registry.address: required (it comes with the job's inputs only when they are deferred)")
	}
	if err := p.fetch(ctx, run, s.Source, "module_sync.source"); err != nil {
		fmt.Fprintf(run.Stdout, "outpost: %v: it is fetched from the install's registry once the job has its inputs\n", err)
		m.Module = nil
	}
	return nil
}

// joinSync waits for the sync fetchModule started, if any, and gives its
// error.
func (p *plugin) joinSync() error {
	if p.syncing == nil {
		return nil
	}
	err := <-p.syncing
	p.syncing = nil
	return err
}

// fetchSynced fetches the module from the install's registry, after
// syncModule.
func (p *plugin) fetchSynced(ctx context.Context, run plugins.Run) error {
	d := p.m.ModuleSync.Destination
	return p.fetch(ctx, run, protocol.ArtifactRef{Registry: d.Registry, Repository: d.Repository, Digest: p.synced.Digest}, "module_sync")
}

// fetch fetches the module archive of the terraform-module artifact ref
// names; field names it in errors.
func (p *plugin) fetch(ctx context.Context, run plugins.Run, ref protocol.ArtifactRef, field string) error {
	fmt.Fprintf(run.Stdout, "outpost: fetching the module %s/%s@%s\n", ref.Registry.Address, ref.Repository, ref.Digest)
	var err error
	if p.m.Module, p.fetched, err = ociclient.FetchTerraformModule(ctx, ref); err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	p.providers = p.fetched.Providers()
	return nil
}

// syncModule copies the step's build into the install's registry, as an
// oci sync job does, and checks that what was synced is the build. got is what
// the job fetched of the build already (nil when the fetch runs meanwhile):
// copied from memory, it is not read from the vendor's registry again.
func (p *plugin) syncModule(ctx context.Context, run plugins.Run, got *ociclient.Fetched) error {
	s := p.m.ModuleSync
	scrub := ociclient.NewScrubber(s.Source.Registry.Username, s.Source.Registry.Password,
		s.Destination.Registry.Username, s.Destination.Registry.Password)
	dst, err := ociclient.NewTarget(s.Destination)
	if err != nil {
		return scrub.Error(fmt.Errorf("module_sync.destination: %w", err))
	}
	art, err := ociclient.Sync(ctx, scrub.Writer(run.Stdout), s.Source, dst, got)
	switch {
	case err != nil:
		return scrub.Error(fmt.Errorf("module_sync: %w", err))
	case art.Digest != s.Source.Digest:
		return fmt.Errorf("module_sync: %s holds %s, the build is %s", dst.Name, art.Digest, s.Source.Digest)
	}
	fmt.Fprintf(run.Stdout, "outpost: synced: %s holds %s\n", dst.Name, art.Digest)
	p.synced = &art
	return nil
}
