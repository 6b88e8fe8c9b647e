package localcluster

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	cri "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// criNamespace is the containerd namespace of the CRI plugin's images and
// containers.
const criNamespace = "k8s.io"

// startContainerd starts containerd and waits until it answers.
func (n *Node) startContainerd(ctx context.Context) error {
	if err := n.start("containerd", "containerd", "--config", n.path(containerdDir, "config.toml")); err != nil {
		return err
	}
	for {
		if err := exec.CommandContext(ctx, "ctr", "-a", n.socket, "version").Run(); err == nil {
			return nil
		}
		if err := n.exited(); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("containerd does not answer on %s: %w", n.socket, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// LoadImage imports an image tarball (docker save or OCI layout format,
// as go-containerregistry's tarball.Write makes) into the node's containerd,
// where the kubelet finds it under the names it was saved with: a pod using
// it needs imagePullPolicy IfNotPresent or Never.
func (n *Node) LoadImage(ctx context.Context, tarball string) error {
	out, err := exec.CommandContext(ctx, "ctr", "-a", n.socket, "-n", criNamespace,
		"images", "import", "--snapshotter", n.snapshotterName, tarball).CombinedOutput()
	if err != nil {
		return fmt.Errorf("importing %s into the node's containerd: %w: %s", tarball, err, out)
	}
	return nil
}

// removePods stops and removes every pod sandbox (and so its containers and
// network namespace) through the CRI: containerd's shims outlive containerd
// itself.
func (n *Node) removePods() error {
	ctx, cancel := context.WithTimeout(context.Background(), n.stopWait)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+n.socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rt := cri.NewRuntimeServiceClient(conn)
	list, err := rt.ListPodSandbox(ctx, &cri.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var errs []error
	for _, s := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &cri.StopPodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &cri.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
