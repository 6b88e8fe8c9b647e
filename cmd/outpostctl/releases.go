package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) releasesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "releases", Short: "Deploy a config version to many installs in batches; follow, pause, resume, cancel, roll back"}
	cmd.AddCommand(c.releasesCreateCmd(), c.releasesListCmd(), c.releasesShowCmd(),
		c.releaseActionCmd("pause", "Pause a release before its next batch (the running batch finishes)"),
		c.releaseActionCmd("resume", "Resume a paused or halted release (a halted one deploys its failed installs again first)"),
		c.releaseActionCmd("cancel", "Cancel a release: the running batch finishes, the installs not reached are skipped"),
		c.releaseActionCmd("rollback", "Roll a release back: every install it deployed returns to the version it ran before, in the same batches"))
	return cmd
}

// releaseFlags are the flags of `releases create`.
type releaseFlags struct {
	selector, pause, soak          string
	onUnhealthy                    string
	version, size, percent, thresh int
	all, wait                      bool
	installs                       []string
}

func (c *cli) releasesCreateCmd() *cobra.Command {
	var f releaseFlags
	var req apiclient.CreateReleaseRequest
	cmd := c.withApp(&cobra.Command{
		Use: "create --app APP [--config-version N] [--all | --install NAME... | --selector S] [--batch-size N | --batch-percent P] " +
			"[--pause D] [--failure-threshold N] [--soak D [--on-unhealthy halt|rollback]] [--wait]",
		Short: "Deploy a config version (default: the latest) to some of an app's installs, in batches",
		Long: "Start a release: each selected install (in name order, --batch-size or --batch-percent at a time) runs a\n" +
			"deploy_config operation to the version. After --failure-threshold failed installs (default 1) the\n" +
			"release halts; `releases resume` deploys the failed ones again. With --soak, each batch's installs must stay\n" +
			"healthy that long after their deploys: one that turns unhealthy (or is not healthy at the end) halts the\n" +
			"release, after rolling the batch back to the versions it ran before with --on-unhealthy rollback;\n" +
			"`releases resume` goes on with the next batch. With --wait, follow it until it ends or\n" +
			"halts: exit code 6 if it halted or was cancelled.",
		Args: cobra.NoArgs,
		PreRunE: func(cmd *cobra.Command, _ []string) (err error) {
			req, err = f.request(cmd)
			return err
		},
	}, func(ctx context.Context, a *api, app apiclient.App, _ []string) error {
		r, err := check(a.CreateReleaseWithResponse(ctx, app.Id, req))
		if err != nil {
			return err
		}
		return c.releaseStarted(ctx, a, app, *r.JSON202, r.Body, f.wait)
	})
	fl := cmd.Flags()
	fl.IntVar(&f.version, "config-version", 0, "the config version to deploy (default: the latest)")
	fl.BoolVar(&f.all, "all", false, "every install of the app")
	fl.StringSliceVar(&f.installs, "install", nil, "an install, by name (repeat or comma-separate)")
	fl.StringVar(&f.selector, "selector", "", "a label selector, e.g. env=prod,tier!=free")
	fl.IntVar(&f.size, "batch-size", 0, "installs per batch (default 1)")
	fl.IntVar(&f.percent, "batch-percent", 0, "installs per batch, as a percentage of those selected")
	fl.StringVar(&f.pause, "pause", "", "pause between batches, e.g. 30s")
	fl.IntVar(&f.thresh, "failure-threshold", 0, "failed installs that halt the release (default 1)")
	fl.StringVar(&f.soak, "soak", "", "how long each batch must stay healthy after its deploys, e.g. 10m (default: no health gate)")
	fl.StringVar(&f.onUnhealthy, "on-unhealthy", "", "what a batch that does not stay healthy does: halt (default) or rollback")
	fl.BoolVar(&f.wait, "wait", false, "follow the release until it ends or halts")
	cmd.MarkFlagsMutuallyExclusive("all", "install", "selector")
	cmd.MarkFlagsOneRequired("all", "install", "selector")
	cmd.MarkFlagsMutuallyExclusive("batch-size", "batch-percent")
	return cmd
}

// request is the API request the flags ask for; only the flags given are
// sent (the API checks their values and names the field it refuses).
func (f releaseFlags) request(cmd *cobra.Command) (apiclient.CreateReleaseRequest, error) {
	var req apiclient.CreateReleaseRequest
	set := func(name string, v int) *int {
		if cmd.Flags().Changed(name) {
			return &v
		}
		return nil
	}
	req.ConfigVersion, req.BatchSize = set("config-version", f.version), set("batch-size", f.size)
	req.BatchPercent, req.FailureThreshold = set("batch-percent", f.percent), set("failure-threshold", f.thresh)
	req.PauseBetweenBatches, req.Soak = optional(f.pause), optional(f.soak)
	if f.onUnhealthy != "" {
		req.OnUnhealthy = new(apiclient.CreateReleaseRequestOnUnhealthy(f.onUnhealthy))
	}
	switch {
	case f.all:
		req.Installs.All = &f.all
	case len(f.installs) > 0:
		req.Installs.Names = &f.installs
	case f.selector != "":
		req.Installs.Selector = f.selector
	default:
		return req, fail(exitUsage, "--selector: is empty")
	}
	return req, nil
}

func (c *cli) releasesListCmd() *cobra.Command {
	return c.withApp(&cobra.Command{Use: "list --app APP", Short: "List an app's releases, newest first", Args: cobra.NoArgs},
		func(ctx context.Context, a *api, app apiclient.App, _ []string) error {
			r, err := check(a.ListReleasesWithResponse(ctx, app.Id))
			return printRows(c, r, err, "ID\tCONFIG\tSTATUS\tINSTALLS\tCREATED", func() []apiclient.Release { return r.JSON200.Releases },
				func(rel apiclient.Release) []string {
					return []string{rel.Id, releaseVersion(rel), string(rel.Status), releaseCounts(rel), stamp(rel.CreatedAt)}
				})
		})
}

func (c *cli) releasesShowCmd() *cobra.Command {
	return c.withApp(&cobra.Command{Use: "show --app APP RELEASE", Short: "Show a release: its status and each batch's installs", Args: cobra.ExactArgs(1)},
		func(ctx context.Context, a *api, app apiclient.App, args []string) error {
			r, err := check(a.GetReleaseWithResponse(ctx, app.Id, args[0]))
			return c.printAnswer(r, notFound(err, "app %s has no release %q (`outpostctl releases list --app %s` shows them)", app.Name, args[0], app.Name), func() error {
				c.showRelease(*r.JSON200)
				return nil
			})
		})
}

// releaseActionCmd is pause, resume, cancel or rollback (resume and
// rollback, with --wait, follow the release: for a rollback, the new one).
func (c *cli) releaseActionCmd(action, short string) *cobra.Command {
	var wait bool
	cmd := c.withApp(&cobra.Command{Use: action + " --app APP RELEASE", Short: short, Args: cobra.ExactArgs(1)},
		func(ctx context.Context, a *api, app apiclient.App, args []string) error {
			rel, body, err := a.releaseAction(ctx, action, app.Id, args[0])
			if err = notFound(err, "app %s has no release %q", app.Name, args[0]); err != nil {
				return err
			}
			return c.releaseStarted(ctx, a, app, rel, body, wait)
		})
	if action == "rollback" || action == "resume" {
		cmd.Flags().BoolVar(&wait, "wait", false, "follow the release until it ends or halts")
	}
	return cmd
}

// releaseAction posts a release action; the release it answers (for a
// rollback, the new release).
func (a *api) releaseAction(ctx context.Context, action, app, id string) (apiclient.Release, []byte, error) {
	var (
		rel  *apiclient.Release
		body []byte
		err  error
	)
	switch action {
	case "pause":
		r, e := check(a.PauseReleaseWithResponse(ctx, app, id))
		rel, body, err = r.JSON202, r.Body, e
	case "resume":
		r, e := check(a.ResumeReleaseWithResponse(ctx, app, id))
		rel, body, err = r.JSON202, r.Body, e
	case "cancel":
		r, e := check(a.CancelReleaseWithResponse(ctx, app, id))
		rel, body, err = r.JSON202, r.Body, e
	default:
		r, e := check(a.RollbackReleaseWithResponse(ctx, app, id))
		rel, body, err = r.JSON202, r.Body, e
	}
	if err != nil {
		return apiclient.Release{}, nil, err
	}
	return *rel, body, nil
}

// releaseStarted prints a release the API answered, or follows it.
func (c *cli) releaseStarted(ctx context.Context, a *api, app apiclient.App, rel apiclient.Release, body []byte, wait bool) error {
	if wait {
		return c.waitRelease(ctx, a, app, rel)
	}
	if c.output == "json" {
		return c.printBody(body)
	}
	fmt.Fprintf(c.stdout, "release %s (%s): %s, %s\n", rel.Id, releaseVersion(rel), rel.Status, releaseCounts(rel))
	return nil
}

// releasePoll is how often --wait asks for a release's progress.
const releasePoll = time.Second

// waitRelease polls the release until it ends or halts, printing each
// change of an install's progress.
func (c *cli) waitRelease(ctx context.Context, a *api, app apiclient.App, rel apiclient.Release) error {
	progress, seen, body := c.progressOut(), map[string]bool{}, []byte(nil)
	err := pollUntil(ctx, releasePoll, func() (bool, error) {
		r, err := check(a.GetReleaseWithResponse(ctx, app.Id, rel.Id))
		if err != nil {
			return false, err
		}
		rel, body = *r.JSON200, r.Body
		for _, b := range rel.Batches {
			for _, line := range b.Progress {
				if !seen[line] {
					seen[line] = true
					fmt.Fprintf(progress, "%s batch %d: %s\n", time.Now().Format("15:04:05"), b.Batch+1, line)
				}
			}
		}
		return rel.FinishedAt != nil || rel.Status == apiclient.ReleaseStatus("halted"), nil
	})
	if err != nil {
		return err
	}
	return c.releaseEnded(app, rel, body)
}

func (c *cli) releaseEnded(app apiclient.App, rel apiclient.Release, body []byte) error {
	var failed error
	switch rel.Status {
	case "halted":
		failed = fail(exitOperation, "release %s halted: %s (fix it, then `outpostctl releases resume --app %s %s`)",
			rel.Id, strings.Join(strings.Fields(deref(rel.Error)), " "), app.Name, rel.Id)
	case "cancelled":
		failed = fail(exitOperation, "release %s was cancelled", rel.Id)
	}
	return c.printEnded(body, func() { fmt.Fprintf(c.stdout, "release %s: %s\n", rel.Id, rel.Status) }, failed)
}

func (c *cli) showRelease(rel apiclient.Release) {
	w := c.stdout
	fmt.Fprintf(w, "release %s (%s): %s\n", rel.Id, releaseVersion(rel), rel.Status)
	fmt.Fprintf(w, "batches of %d, pause %s, halts after %d failed\n", rel.BatchSize, rel.PauseBetweenBatches, rel.FailureThreshold)
	if rel.OnUnhealthy != nil && *rel.OnUnhealthy != "" {
		fmt.Fprintf(w, "health gate: each batch healthy for %s after its deploys, else %s\n", rel.Soak, *rel.OnUnhealthy)
	}
	if rel.Error != nil && *rel.Error != "" {
		fmt.Fprintf(w, "halted: %s\n", *rel.Error)
	}
	for _, b := range rel.Batches {
		fmt.Fprintf(w, "batch %d:\n", b.Batch+1)
		for i, ri := range b.Installs {
			fmt.Fprintf(w, "  %s\t%s\t%d -> %d\t%s\n", ri.InstallName, ri.Status, ri.FromVersion, ri.ToVersion, deref(ri.OperationId))
			if ri.Status != "succeeded" && ri.Status != "pending" {
				fmt.Fprintf(w, "    %s\n", b.Progress[i])
			}
		}
	}
}

func releaseVersion(rel apiclient.Release) string {
	if rel.RollbackOf != nil && *rel.RollbackOf != "" {
		return "rollback of " + *rel.RollbackOf
	}
	return fmt.Sprintf("config version %d", rel.ConfigVersion)
}

// releaseCounts says how many of the release's installs are in each state.
func releaseCounts(rel apiclient.Release) string {
	n, by := 0, map[string]int{}
	for _, b := range rel.Batches {
		for _, ri := range b.Installs {
			n++
			by[string(ri.Status)]++
		}
	}
	return fmt.Sprintf("%d installs: %d succeeded, %d failed, %d pending", n, by["succeeded"], by["failed"], by["pending"]+by["waiting"])
}

func (c *cli) installsLabelsCmd() *cobra.Command {
	var req apiclient.PatchLabelsRequest
	return c.withInstall(&cobra.Command{
		Use:   "labels INSTALL [key=value]... [key-]...",
		Short: "Show, set (key=value) and remove (key-) an install's labels, which select it in a release",
		Args:  cobra.MinimumNArgs(1),
		PreRunE: func(_ *cobra.Command, args []string) (err error) {
			req, err = labelChanges(args[1:])
			return err
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
		labels, body := inst.Labels, []byte(nil)
		if len(args) > 1 {
			r, err := check(a.PatchInstallLabelsWithResponse(ctx, inst.Id, req))
			if err != nil {
				return err
			}
			labels, body = r.JSON200.Labels, r.Body
		}
		return c.printLabels(labels, body)
	})
}

// labelChanges parses key=value (set) and key- (remove) arguments.
// newLabels are an install's labels at create, from key=value flags (nil
// for none).
func newLabels(args []string) (*apiclient.Labels, error) {
	for _, arg := range args {
		if k, _, ok := strings.Cut(arg, "="); !ok || k == "" {
			return nil, fail(exitUsage, "--label %q: want key=value", arg)
		}
	}
	if len(args) == 0 {
		return nil, nil
	}
	req, err := labelChanges(args)
	return req.Set, err
}

func labelChanges(args []string) (apiclient.PatchLabelsRequest, error) {
	set, remove := apiclient.Labels{}, []string{}
	for _, arg := range args {
		k, v, ok := strings.Cut(arg, "=")
		switch {
		case ok && k != "":
			set[k] = v
		case !ok && strings.HasSuffix(arg, "-") && len(arg) > 1:
			remove = append(remove, strings.TrimSuffix(arg, "-"))
		default:
			return apiclient.PatchLabelsRequest{}, fail(exitUsage, "%q: say key=value to set a label, key- to remove one", arg)
		}
	}
	return apiclient.PatchLabelsRequest{Set: &set, Remove: &remove}, nil
}

func (c *cli) printLabels(labels apiclient.Labels, body []byte) error {
	if c.output == "json" {
		if body == nil {
			return c.printJSON(labels)
		}
		return c.printBody(body)
	}
	keys := slices.Sorted(maps.Keys(labels))
	for _, k := range keys {
		fmt.Fprintf(c.stdout, "%s=%s\n", k, labels[k])
	}
	return nil
}
