package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) supportBundleCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "support-bundle", Short: "Collect, list, download and delete an install's support bundles"}
	cmd.AddCommand(c.supportBundleCreateCmd(), c.supportBundleListCmd(), c.supportBundleDownloadCmd(), c.supportBundleDeleteCmd(),
		c.supportLogsCmd())
	return cmd
}

func (c *cli) supportBundleDeleteCmd() *cobra.Command {
	return c.installCmd("delete INSTALL BUNDLE_ID", "Delete a support bundle and its archive (an install keeps at most 10)", 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			if _, err := check(a.DeleteSupportBundleWithResponse(ctx, inst.Id, args[1])); err != nil {
				return notFound(err, "no support bundle %s on install %s (or it expired)", args[1], args[0])
			}
			fmt.Fprintf(c.stdout, "deleted support bundle %s\n", args[1])
			return nil
		})
}

func (c *cli) supportBundleCreateCmd() *cobra.Command {
	var wait bool
	var out string
	cmd := c.withInstall(&cobra.Command{
		Use:   "create INSTALL [--wait] [--out FILE]",
		Short: "Have the install's runner collect a support bundle (redacted in the customer's account)",
		Long: "The runner collects its own recent log, the install's job history, its terraform resources (names\n" +
			"and types), each helm release's status and history, and the events and recent container logs of\n" +
			"the releases' namespaces, and redacts the install's sensitive values and anything that looks like a\n" +
			"credential before the archive leaves the account. --wait waits for it; --out FILE (implies --wait)\n" +
			"downloads it there. Exit code 6 when the bundle failed.",
		Args: cobra.ExactArgs(1),
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		r, err := check(a.CreateSupportBundleWithResponse(ctx, inst.Id))
		if err != nil {
			return err
		}
		b := *r.JSON202
		if wait || out != "" {
			if b, err = a.awaitBundle(ctx, b); err != nil {
				return err
			}
		}
		if err := c.showBundle(b); err != nil {
			return err
		}
		if b.FinishedAt != nil && b.Status != apiclient.SupportBundleStatusSucceeded {
			return fail(exitOperation, "support bundle %s %s: %s", b.Id, b.Status, deref(b.Error))
		}
		if out != "" {
			return c.downloadBundle(ctx, a, b, out)
		}
		return nil
	})
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the bundle is collected")
	cmd.Flags().StringVar(&out, "out", "", "download the bundle to this file once collected")
	return cmd
}

// awaitBundle reads the bundle again until it has finished.
func (a *api) awaitBundle(ctx context.Context, b apiclient.SupportBundle) (apiclient.SupportBundle, error) {
	secs := 20
	for b.FinishedAt == nil {
		r, err := check(a.GetSupportBundleWithResponse(ctx, b.InstallId, b.Id, &apiclient.GetSupportBundleParams{Wait: &secs}))
		if err != nil {
			return b, err
		}
		b = *r.JSON200
	}
	return b, nil
}

func (c *cli) showBundle(b apiclient.SupportBundle) error {
	if c.output == "json" {
		return c.printJSON(b)
	}
	fmt.Fprintf(c.stdout, "support bundle %s: %s", b.Id, b.Status)
	if b.Status == apiclient.SupportBundleStatusSucceeded {
		fmt.Fprintf(c.stdout, ", %d parts, %d bytes, kept until %s", len(b.Parts), b.SizeBytes, b.ExpiresAt.Local().Format(time.DateTime))
	}
	fmt.Fprintln(c.stdout)
	if b.Unavailable != nil {
		for _, u := range *b.Unavailable {
			fmt.Fprintf(c.stdout, "  %s\n", u)
		}
	}
	return nil
}

func (c *cli) supportBundleListCmd() *cobra.Command {
	return c.installCmd("list INSTALL", "List the install's support bundles, newest first (expired ones are gone)", 1,
		func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
			r, err := check(a.ListSupportBundlesWithResponse(ctx, inst.Id, nil))
			return printRows(c, r, err, "ID\tSTATUS\tBYTES\tPARTS\tCREATED\tEXPIRES",
				func() []apiclient.SupportBundle { return r.JSON200.SupportBundles },
				func(b apiclient.SupportBundle) []string {
					return []string{b.Id, string(b.Status), fmt.Sprint(b.SizeBytes), fmt.Sprint(len(b.Parts)),
						b.CreatedAt.Local().Format(time.DateTime), b.ExpiresAt.Local().Format(time.DateTime)}
				})
		})
}

func (c *cli) supportBundleDownloadCmd() *cobra.Command {
	var out string
	cmd := c.installCmd("download INSTALL BUNDLE_ID [--out FILE]", "Download a support bundle (a tar.gz; default file support-bundle-<id>.tar.gz)", 2,
		func(ctx context.Context, a *api, inst apiclient.Install, args []string) error {
			r, err := check(a.GetSupportBundleWithResponse(ctx, inst.Id, args[1], nil))
			if err != nil {
				return notFound(err, "no support bundle %s on install %s (or it expired)", args[1], args[0])
			}
			return c.downloadBundle(ctx, a, *r.JSON200, out)
		})
	cmd.Flags().StringVarP(&out, "out", "f", "", "the file to write (default support-bundle-<id>.tar.gz)")
	return cmd
}

// downloadBundle writes the bundle's archive to out, checking its SHA-256.
func (c *cli) downloadBundle(ctx context.Context, a *api, b apiclient.SupportBundle, out string) error {
	if out == "" {
		out = "support-bundle-" + b.Id + ".tar.gz"
	}
	r, err := check(a.DownloadSupportBundleWithResponse(ctx, b.InstallId, b.Id))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(r.Body)
	if b.Sha256 != nil && !strings.EqualFold(*b.Sha256, hex.EncodeToString(sum[:])) {
		return fail(exitOperation, "support bundle %s: the download's SHA-256 does not match the bundle's", b.Id)
	}
	if err := os.WriteFile(out, r.Body, 0o600); err != nil {
		return fail(exitUsage, "writing %s: %v", out, err)
	}
	if c.output != "json" {
		fmt.Fprintf(c.stderr, "wrote %s (%d bytes)\n", out, len(r.Body))
	}
	return nil
}

func (c *cli) supportLogsCmd() *cobra.Command {
	var namespace, workload string
	var since time.Duration
	var tail int64
	cmd := c.withInstall(&cobra.Command{
		Use:   "logs INSTALL --namespace NS [--workload NAME] [--since D] [--tail N]",
		Short: "Stream one namespace's (or workload's) events and container logs from the install's cluster",
		Long: "The install's runner reads the events and container logs of the namespace (or of the pods whose name\n" +
			"starts with --workload) since --since ago, redacted as a support bundle is, and they stream back as\n" +
			"its job's log.",
		Args: cobra.ExactArgs(1),
		PreRunE: func(*cobra.Command, []string) error {
			if namespace == "" {
				return fail(exitUsage, "--namespace: required")
			}
			if since < time.Second {
				return fail(exitUsage, "--since %s: want at least 1s", since)
			}
			return nil
		},
	}, func(ctx context.Context, a *api, inst apiclient.Install, _ []string) error {
		secs := int(since.Seconds())
		req := apiclient.CreateLogsRequest{Namespace: namespace, SinceSeconds: &secs}
		if workload != "" {
			req.Workload = &workload
		}
		if tail > 0 {
			n := int(tail)
			req.TailLines = &n
		}
		r, err := check(a.CreateLogsRequestWithResponse(ctx, inst.Id, req))
		if err != nil {
			return err
		}
		end, err := a.followLogs(ctx, r.JSON202.JobId, c.chunkPrinter(true))
		if err != nil {
			return err
		}
		if end.Status != "" && end.Status != "succeeded" {
			return fail(exitOperation, "logs request %s: job %s %s: %s", r.JSON202.Id, r.JSON202.JobId, end.Status, end.Error)
		}
		return nil
	})
	f := cmd.Flags()
	f.StringVarP(&namespace, "namespace", "n", "", "the namespace (required)")
	f.StringVar(&workload, "workload", "", "only the pods whose name starts with this")
	f.DurationVar(&since, "since", time.Hour, "how far back")
	f.Int64Var(&tail, "tail", 0, "at most this many lines per container (default: all since --since)")
	return cmd
}
