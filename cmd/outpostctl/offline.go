package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// The vendor's side of an offline deploy (docs/bundles.md, "Offline deploy:
// the vendor's side"): export an install file for the air-gapped runner,
// import the result it writes.

func (c *cli) installsExportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "export INSTALL [--out FILE]",
		Short: "Write an install's offline install file, for `outpost-runner offline deploy`",
		Long: "Write the install file an air-gapped runner's offline deploy reads: who the install is, its labels and\n" +
			"its non-sensitive input values. Sensitive inputs are named, never valued: the customer gives them on\n" +
			"the machine. To stdout, or with --out to FILE (written whole, or not at all).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.ExportOfflineInstallWithResponse(cmd.Context(), inst.Id))
			if err != nil {
				return err
			}
			if out == "" {
				return c.printBody(r.Body)
			}
			if err := writeIndented(out, r.Body); err != nil {
				return err
			}
			if c.output != "json" {
				f := r.JSON200
				fmt.Fprintf(c.stderr, "wrote %s: install %s (%s) of app %s, %d input(s); sensitive, to give on the machine: %s\n",
					out, f.InstallName, f.InstallId, f.AppName, len(f.Inputs), orNone(deref2(f.SensitiveInputs)))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "f", "", "the file to write (default stdout)")
	return cmd
}

// writeIndented writes body, indented JSON, to path through a temporary
// file beside it, renamed once whole.
func writeIndented(path string, body []byte) error {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return fail(exitUnreachable, "the API's install file is not JSON: %v", err)
	}
	b.WriteByte('\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), ".offline-install-*")
	if err != nil {
		return fail(exitUsage, "writing %s: %v", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b.Bytes())
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fail(exitUsage, "writing %s: %v", path, err)
	}
	return nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func (c *cli) installsImportResultCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "import-result INSTALL RESULT.json",
		Short: "Import an offline deploy's result as an operation of the install",
		Long: "Import the result `outpost-runner offline deploy` wrote: it becomes a finished offline_deploy operation\n" +
			"of the install, with its steps, logs, policies and outputs. Importing the same result again answers the\n" +
			"operation it made. A field missing or wrong is refused, naming it (exit 1); so is a result while another\n" +
			"operation holds the install (exit 5). With -o json, the operation.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := readResult(args[1])
			if err != nil {
				return err
			}
			a, inst, err := c.apiForInstall(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			r, err := check(a.ImportOfflineResultWithBodyWithResponse(cmd.Context(), inst.Id, "application/json", bytes.NewReader(body)))
			return c.printAnswer(r, err, func() error {
				op, what := r.JSON201, "imported"
				if op == nil {
					op, what = r.JSON200, "already imported"
				}
				fmt.Fprintf(c.stdout, "%s: operation %s (%s, %s) of install %s, config version %d, bundle index %s\n",
					what, op.Id, op.Kind, op.Status, inst.Name, derefInt(op.ConfigVersion), deref(op.BundleIndex))
				return nil
			})
		},
	}
}

// readResult is the result file's bytes, refused if it is not JSON.
func readResult(path string) ([]byte, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fail(exitUsage, "reading the result: %v", err)
	}
	var v map[string]json.RawMessage
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fail(exitUsage, "%s is not an offline result (a JSON object, as `outpost-runner offline deploy` writes): %v", path, err)
	}
	return body, nil
}
