package helm

import (
	"context"
	"fmt"
	"io"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
)

// policyCheck checks a chart's rendered objects against the plan policies.
type policyCheck struct {
	checker *planpolicy.Checker
	pp      protocol.PlanPolicies
	out     io.Writer
}

// newPolicyCheck compiles the vendor's policies (the manifest's) and the
// customer's (the runner's planpolicy.EnvDir); nil when there are none.
func newPolicyCheck(ctx context.Context, m *protocol.HelmManifest, run plugins.Run) (*policyCheck, error) {
	var pc policyCheck
	if m.Policies != nil {
		pc.pp = *m.Policies
	}
	dir := ""
	for _, kv := range run.Env {
		if len(kv) > len(planpolicy.EnvDir) && kv[:len(planpolicy.EnvDir)+1] == planpolicy.EnvDir+"=" {
			dir = kv[len(planpolicy.EnvDir)+1:]
		}
	}
	c, err := planpolicy.NewChecker(ctx, pc.pp.Modules, dir)
	if err != nil || c.Len() == 0 {
		return nil, err
	}
	pc.checker, pc.out = c, run.Stdout
	return &pc, nil
}

// check evaluates the policies on objs; its error names each denial.
func (pc *policyCheck) check(ctx context.Context, objs []object) ([]protocol.PolicyResult, error) {
	if pc == nil {
		return nil, nil
	}
	start := time.Now()
	manifests := make([]any, len(objs))
	for i, o := range objs {
		manifests[i] = o.content
	}
	res := pc.checker.Check(ctx, planpolicy.Input{Kind: planpolicy.KindHelm, Install: pc.pp.Install, Step: pc.pp.Step, Manifests: manifests})
	planpolicy.Report(pc.out, res)
	fmt.Fprintf(pc.out, "outpost: %d plan policies checked in %s\n", len(res), time.Since(start).Round(time.Millisecond))
	return res, planpolicy.Denied(res)
}

// checkBeforeDeploy renders what the deploy would (dryRun)
// and checks it: a deploy changes nothing its policies deny, whatever plan
// was approved before.
func (r *releaseJob) checkBeforeDeploy(ctx context.Context, ch *chart.Chart, vals map[string]any, s releaseState) error {
	if r.policies == nil {
		return nil
	}
	rel, err := r.dryRun(ctx, ch, vals, s)
	if err != nil {
		return err
	}
	objs, err := parseManifest(rel.Manifest, r.m.Namespace, r.mapper)
	if err != nil {
		return err
	}
	_, err = r.policies.check(ctx, objs)
	return err
}

// dryRun renders what a deploy would, without changing anything (helm's
// server-side dry run: lookups and capabilities are the cluster's).
func (r *releaseJob) dryRun(ctx context.Context, ch *chart.Chart, vals map[string]any, s releaseState) (*release.Release, error) {
	if s.deployed == nil {
		in := r.newInstall(ctx, false)
		in.DryRun, in.DryRunOption = true, "server"
		in.Replace = len(s.history) > 0 // a deploy removes failed revisions first
		rel, err := in.RunWithContext(ctx, ch, vals)
		if err != nil {
			return nil, fmt.Errorf("planning the install of release %s: %w", r.m.Release, err)
		}
		return rel, nil
	}
	up := r.newUpgrade(ctx, false)
	up.DryRun, up.DryRunOption = true, "server"
	rel, err := up.RunWithContext(ctx, r.m.Release, ch, vals)
	if err != nil {
		return nil, fmt.Errorf("planning the upgrade of release %s: %w", r.m.Release, err)
	}
	return rel, nil
}
