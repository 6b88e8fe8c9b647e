package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/outpost-dev/outpost/apiclient"
)

func (c *cli) bundleCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "bundle", Short: "Signed release bundles: export one, show the release key that signs them"}
	cmd.AddCommand(c.bundleExportCmd(), c.bundleKeyCmd())
	return cmd
}

func (c *cli) bundleExportCmd() *cobra.Command {
	var appRef, version, out string
	cmd := &cobra.Command{
		Use:   "export --app APP --config-version N [--out FILE]",
		Short: "Write a config version's signed release bundle (an OCI image layout as a tar)",
		Long: "The control plane copies every artifact of the version's builds from the vendor registry into one OCI\n" +
			"image layout with the config version and an index, signs the index with the org's release key, and\n" +
			"streams it here. Check it with `outpost-runner offline verify FILE --release-key KEY.pem`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, app, err := c.apiForApp(cmd.Context(), appRef)
			if err != nil {
				return err
			}
			if out == "" {
				out = fmt.Sprintf("%s-%s.tar", app.Name, version)
			}
			return c.exportBundle(cmd.Context(), a, app.Id, version, out)
		},
	}
	appFlag(cmd, &appRef)
	cmd.Flags().StringVar(&version, "config-version", "latest", "the config version (a number, or latest)")
	cmd.Flags().StringVarP(&out, "out", "f", "", "the file to write (default <app>-<version>.tar)")
	return cmd
}

// exportBundle streams the bundle into out (through a temporary file
// beside it, renamed once whole).
func (c *cli) exportBundle(ctx context.Context, a *api, appID, version, out string) error {
	res, err := a.ExportReleaseBundle(ctx, appID, version)
	if err != nil {
		return &apiError{Err: err}
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		return &apiError{Status: res.StatusCode, Body: body}
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".bundle-*")
	if err != nil {
		return fail(exitUsage, "writing %s: %v", out, err)
	}
	defer os.Remove(tmp.Name())
	// 1 MiB at a time: io.Copy's 32 KiB writes were most of the CLI's time.
	n, err := io.CopyBuffer(struct{ io.Writer }{tmp}, res.Body, make([]byte, 1<<20))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(exitOperation, "release bundle: %v", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fail(exitUsage, "writing %s: %v", out, err)
	}
	if c.output != "json" {
		fmt.Fprintf(c.stderr, "wrote %s (%d bytes): index %s, signed by release key %s\n", out, n,
			res.Header.Get("Outpost-Bundle-Index"), res.Header.Get("Outpost-Release-Key"))
	}
	return nil
}

func (c *cli) bundleKeyCmd() *cobra.Command {
	var out string
	var create bool
	cmd := &cobra.Command{
		Use:   "release-key [--create] [--out FILE]",
		Short: "Show the org's release public key (what customers trust), or write it as PEM",
		Long:  "With --create (an admin's), the key is made if the org has none yet; an export makes it too.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := c.api()
			if err != nil {
				return err
			}
			if create {
				r, err := check(a.CreateReleaseKeyWithResponse(cmd.Context()))
				if err != nil {
					return err
				}
				return c.printKey(r, *r.JSON200, out)
			}
			r, err := check(a.GetReleaseKeyWithResponse(cmd.Context()))
			if err != nil {
				return notFound(err, "the org has no release key yet: `outpostctl bundle release-key --create` (an admin) or a bundle export makes it")
			}
			return c.printKey(r, *r.JSON200, out)
		},
	}
	cmd.Flags().BoolVar(&create, "create", false, "make the key if the org has none")
	cmd.Flags().StringVarP(&out, "out", "f", "", "write the public key (PEM) to this file")
	return cmd
}

// printKey shows the key, and writes its PEM to out if set.
func (c *cli) printKey(r answer, k apiclient.ReleaseKey, out string) error {
	if out != "" {
		if err := os.WriteFile(out, []byte(k.PublicKeyPem), 0o644); err != nil {
			return fail(exitUsage, "writing %s: %v", out, err)
		}
	}
	return c.printAnswer(r, nil, func() error {
		fmt.Fprintf(c.stdout, "release key %s (%s), made %s\n%s", k.KeyId, k.Algorithm, stamp(k.CreatedAt), k.PublicKeyPem)
		return nil
	})
}
