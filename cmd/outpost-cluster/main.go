// Command outpost-cluster runs a local Kubernetes API server (etcd and
// kube-apiserver on loopback, package localcluster) until it gets SIGTERM or
// SIGINT, then stops it cleanly and removes its files.
//
//	outpost-cluster [-dir DIR] [-kubeconfig-file FILE] [-pid-file FILE] [-kube-assets DIR] [-assets-wait DURATION]
//
// It writes its process ID to -pid-file at once, and the admin kubeconfig to
// -kubeconfig-file (mode 0600, by a rename) only when the API server is
// ready, so a script may start it in the background and wait for that file:
//
//	outpost-cluster -dir .cluster -kubeconfig-file .cluster/kubeconfig -pid-file .cluster/pid &
//	while [ ! -f .cluster/kubeconfig ]; do sleep 1; done
//	...
//	kill "$(cat .cluster/pid)"   # stops kube-apiserver, then etcd; removes both files
//
// That is how an example sandbox (a terraform module with local-exec
// provisioners) gives its components a cluster and outputs its kubeconfig.
// Each flag may also be set in the environment: OUTPOST_CLUSTER_DIR, …, and
// OUTPOST_KUBE_ASSETS for -kube-assets, the runner's name for that directory.
// The binaries are found as localcluster.FindAssets says: -kube-assets (or
// OUTPOST_KUBE_ASSETS), then .tools/kube/v1.36.3/ in the working directory or
// a parent (bash scripts/tools.sh builds them). With -assets-wait (or
// OUTPOST_KUBE_ASSETS_WAIT, which runners started with --kube-assets-wait
// pass their jobs), missing binaries are waited for, up to that long:
// `outpost dev` sets it while they still build in the background.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/localcluster"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := envflag.New("outpost-cluster", "OUTPOST_CLUSTER_")
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory for the cluster's files: etcd's data, certificates, kubeconfig (default: a temporary one)")
	kubeconfig := fs.String("kubeconfig-file", "", "where to write the admin kubeconfig once the API server is ready (default: DIR/kubeconfig)")
	pidFile := fs.String("pid-file", "", "where to write this process's ID")
	assets := fs.String("kube-assets", "", "directory holding etcd and kube-apiserver (default: "+localcluster.AssetsPath+" here or in a parent)")
	fs.Env("kube-assets", localcluster.EnvAssets)
	assetsWait := fs.Duration("assets-wait", 0, "how long to wait for etcd and kube-apiserver when they are missing (a build under way), saying so each minute (default: fail at once)")
	fs.Env("assets-wait", "OUTPOST_KUBE_ASSETS_WAIT")
	verbose := fs.Bool("v", false, "pass etcd's and kube-apiserver's output through to stderr")
	if err := fs.Parse(args, os.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "outpost-cluster: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := serve(*dir, *kubeconfig, *pidFile, *assets, *assetsWait, *verbose, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "outpost-cluster: %v\n", err)
		return 1
	}
	return 0
}

func serve(dir, kubeconfig, pidFile, assets string, assetsWait time.Duration, verbose bool, stdout, stderr io.Writer) error {
	// Signals are caught from the start: a SIGTERM while the cluster starts
	// stops it as soon as it is up, never leaving etcd behind.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	if pidFile != "" {
		if err := writeFile(pidFile, []byte(strconv.Itoa(os.Getpid())+"\n")); err != nil {
			return fmt.Errorf("-pid-file: %w", err)
		}
		defer os.Remove(pidFile)
	}
	if assetsWait > 0 {
		found, err := waitForAssets(ctx, assets, assetsWait, stdout)
		if err != nil {
			return err
		}
		assets = found
	}
	opts := localcluster.Options{BinaryAssetsDir: assets, Dir: dir}
	if verbose {
		opts.Output = stderr
	}
	c, err := localcluster.Start(opts)
	if err != nil {
		return err
	}
	defer c.Stop()
	path := c.KubeconfigPath()
	if kubeconfig != "" {
		if err := writeFile(kubeconfig, c.Kubeconfig()); err != nil {
			return fmt.Errorf("-kubeconfig-file: %w", err)
		}
		path = kubeconfig
	}
	defer os.Remove(path)
	fmt.Fprintf(stdout, "outpost-cluster: Kubernetes %s API server at %s; kubeconfig: %s\n",
		localcluster.KubernetesVersion, c.Server(), path)

	<-ctx.Done()
	fmt.Fprintln(stdout, "outpost-cluster: stopping")
	os.Remove(path) // first: the cluster is going away

	if err := c.Stop(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "outpost-cluster: stopped")
	return nil
}

// waitForAssets finds etcd and kube-apiserver, waiting up to wait for them
// to appear and saying so each minute.
func waitForAssets(ctx context.Context, configured string, wait time.Duration, out io.Writer) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	next := time.Duration(0)
	return localcluster.WaitForAssets(ctx, configured, wd, func(waited time.Duration) error {
		if waited > wait {
			return fmt.Errorf("-assets-wait: etcd and kube-apiserver did not appear within %s", wait)
		}
		if waited >= next {
			fmt.Fprintf(out, "outpost-cluster: waiting for etcd and kube-apiserver (%s so far, up to %s)\n", waited.Round(time.Second), wait)
			next = waited + time.Minute
		}
		return nil
	})
}

// writeFile writes a file with mode 0600 by a rename, making its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return localcluster.WriteFile(path, data)
}
