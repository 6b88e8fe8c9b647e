package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// The runner's own Deployment, for its self-update in helm mode
// (docs/architecture/runner-update.md): outpost-runner runs
//
//	outpost-runner-helm deployment-image --deployment NAMESPACE/NAME [--set IMAGE]
//
// which prints the image of the Deployment's runner container and, with
// --set, then patches it to IMAGE (a rolling update). The cluster is the one
// of KUBECONFIG when set, else the pod's own (in-cluster).

// runnerContainer is the chart's name of the runner's container.
const runnerContainer = "runner"

func deploymentImage(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("deployment-image", flag.ContinueOnError)
	fs.SetOutput(stderr)
	ref := fs.String("deployment", "", "the runner's Deployment, NAMESPACE/NAME")
	set := fs.String("set", "", "patch the runner container's image to this")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ns, name, ok := strings.Cut(*ref, "/")
	if !ok || ns == "" || name == "" {
		fmt.Fprintf(stderr, "deployment-image: --deployment must be NAMESPACE/NAME, got %q\n", *ref)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	prev, err := setDeploymentImage(ctx, ns, name, *set)
	if err != nil {
		fmt.Fprintf(stderr, "deployment-image: deployment %s: %v\n", *ref, err)
		return 1
	}
	fmt.Fprintln(stdout, prev)
	return 0
}

// setDeploymentImage returns the runner container's image and, when image
// is set, patches it (a strategic merge patch of that one container).
func setDeploymentImage(ctx context.Context, ns, name, image string) (string, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return "", fmt.Errorf("kubernetes config: %w", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", fmt.Errorf("kubernetes client: %w", err)
	}
	d, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", err
	}
	ctrs := d.Spec.Template.Spec.Containers
	i := len(ctrs) - 1
	for i >= 0 && ctrs[i].Name != runnerContainer {
		i--
	}
	if i < 0 && len(ctrs) == 1 {
		i = 0
	}
	if i < 0 {
		return "", errors.New("no container named " + runnerContainer)
	}
	prev := ctrs[i].Image
	if image == "" || image == prev {
		return prev, nil
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
		"containers": []map[string]string{{"name": ctrs[i].Name, "image": image}}}}}})
	if err != nil {
		return "", err
	}
	if _, err := cs.AppsV1().Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return "", fmt.Errorf("patching the image to %s: %w", image, err)
	}
	return prev, nil
}
