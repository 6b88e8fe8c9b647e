package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/outpost-dev/outpost/localcluster"
)

// kubeTools finds, for `outpost dev`, the etcd and kube-apiserver that the
// example sandbox's cluster runs, which `go tool task dev` may still be
// building in the background (scripts/tools.sh --background, logging to
// <data dir>/tools.log) while the rest comes up.
type kubeTools struct {
	toolsLog string // the background build's log
	out      io.Writer
	every    time.Duration // how often wait reports progress
}

func newKubeTools(dataDir string) kubeTools {
	return kubeTools{toolsLog: filepath.Join(dataDir, "tools.log"), out: os.Stdout, every: time.Minute}
}

// building says whether the background build is under way: its log exists
// and its last line is not the one it ends with.
func (k kubeTools) building() bool {
	raw, err := os.ReadFile(k.toolsLog)
	if err != nil {
		return false
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	last := lines[len(lines)-1]
	return !bytes.HasSuffix(last, []byte(" done")) && !bytes.Contains(last, []byte(" failed"))
}

// dir is the directory runners tell jobs to find the binaries in: where
// they are, or where the background build puts them (made now, so that the
// runner accepts it); "" when neither.
func (k kubeTools) dir() string {
	if d, err := localcluster.FindAssets(os.Getenv(localcluster.EnvAssets), "."); err == nil {
		return d
	}
	if !k.building() {
		return ""
	}
	d, err := filepath.Abs(localcluster.AssetsPath)
	if err != nil || os.MkdirAll(d, 0o755) != nil {
		return ""
	}
	return d
}

// clusterAssetsWait is how long the demo's cluster component waits for a
// background build of its binaries (cold: about 12 of its job's 30 minutes).
const clusterAssetsWait = 25 * time.Minute

// env is what runners pass their jobs so that outpost-cluster finds etcd
// and kube-apiserver, and waits for them while they build; nil when there
// are none and no build.
func (k kubeTools) env() []string {
	d := k.dir()
	if d == "" {
		return nil
	}
	env := []string{localcluster.EnvAssets + "=" + d}
	if k.building() {
		env = append(env, "OUTPOST_KUBE_ASSETS_WAIT="+clusterAssetsWait.String())
	}
	return env
}

// wait returns once both binaries are there, reporting progress on out
// while the background build runs. It fails when there is no build to wait
// for, the build fails, or ctx ends.
func (k kubeTools) wait(ctx context.Context) error {
	var reported time.Duration
	check := func(waited time.Duration) error {
		if !k.building() {
			return fmt.Errorf("no etcd/kube-apiserver (see %s; bash scripts/tools.sh kube builds them)", k.toolsLog)
		}
		if reported == 0 || waited-reported >= k.every {
			reported = max(waited, time.Nanosecond)
			fmt.Fprintf(k.out, "kube-apiserver: building (see %s; %s so far); the demo's cluster component waits for it\n",
				k.toolsLog, waited.Round(time.Second))
		}
		return nil
	}
	start := time.Now()
	if _, err := localcluster.WaitForAssets(ctx, os.Getenv(localcluster.EnvAssets), ".", check); err != nil {
		return err
	}
	if reported != 0 {
		fmt.Fprintf(k.out, "kube-apiserver: ready after %s\n", time.Since(start).Round(time.Second))
	}
	return nil
}
