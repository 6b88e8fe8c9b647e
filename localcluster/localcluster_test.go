package localcluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/outpost-dev/outpost/localcluster"
	"github.com/outpost-dev/outpost/localcluster/localclustertest"
)

func TestClusterServesObjectsUntilStopped(t *testing.T) {
	ctx := context.Background()
	c := localclustertest.Start(t)

	// Through the *rest.Config: the admin user may create a namespace.
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		t.Fatal(err)
	}
	v, err := cs.Discovery().ServerVersion()
	if err != nil || v.GitVersion != localcluster.KubernetesVersion {
		t.Errorf("server version %+v %v; want %s (helm checks charts' kubeVersion against it)", v, err, localcluster.KubernetesVersion)
	}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a namespace: %v", err)
	}

	// Through the kubeconfig file, as kubectl or helm would use it.
	fi, err := os.Stat(c.KubeconfigPath())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("kubeconfig file %s: %v, mode %v; want 0600", c.KubeconfigPath(), err, fi.Mode().Perm())
	}
	fromFile, err := clientcmd.BuildConfigFromFlags("", c.KubeconfigPath())
	if err != nil {
		t.Fatal(err)
	}
	if fromFile.Host != c.Server() || !strings.HasPrefix(c.Server(), "https://127.0.0.1:") {
		t.Errorf("kubeconfig server %s, cluster %s; want the same loopback https URL", fromFile.Host, c.Server())
	}
	cs2, err := kubernetes.NewForConfig(fromFile)
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "settings", Namespace: "shop"}, Data: map[string]string{"colour": "blue"}}
	if _, err := cs2.CoreV1().ConfigMaps("shop").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a ConfigMap: %v", err)
	}
	got, err := cs.CoreV1().ConfigMaps("shop").Get(ctx, "settings", metav1.GetOptions{})
	if err != nil || got.Data["colour"] != "blue" {
		t.Errorf("ConfigMap shop/settings: %+v %v", got, err)
	}
	if string(c.Kubeconfig()) != string(mustRead(t, c.KubeconfigPath())) {
		t.Error("Kubeconfig() differs from the kubeconfig file")
	}

	dir := c.Dir()
	if err := c.Stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Errorf("second stop: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the cluster's directory is still there after Stop: %v", err)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "shop", metav1.GetOptions{}); err == nil {
		t.Error("the API server still answers after Stop")
	}
}

func TestMissingBinariesSayHowToBuildThem(t *testing.T) {
	empty := t.TempDir()
	_, err := localcluster.Start(localcluster.Options{BinaryAssetsDir: empty})
	if err == nil || !strings.Contains(err.Error(), empty) || !strings.Contains(err.Error(), "etcd") ||
		!strings.Contains(err.Error(), "scripts/tools.sh") {
		t.Errorf("start with an empty assets directory: %v; want an error naming it, etcd and scripts/tools.sh", err)
	}

	// Nothing configured, nothing in the parents: the search is named.
	_, err = localcluster.FindAssets("", empty)
	if !errors.Is(err, localcluster.ErrAssetsNotFound) || !strings.Contains(err.Error(), empty) ||
		!strings.Contains(err.Error(), filepath.Join(".tools", "kube", localcluster.KubernetesVersion)) ||
		!strings.Contains(err.Error(), "bash scripts/tools.sh") || !strings.Contains(err.Error(), localcluster.EnvAssets) {
		t.Errorf("FindAssets in an empty tree: %v", err)
	}
}

func TestFindAssetsLooksInParents(t *testing.T) {
	root := t.TempDir()
	assets := filepath.Join(root, localcluster.AssetsPath)
	if err := os.MkdirAll(assets, 0o755); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, b := range localcluster.Binaries {
		if _, err := localcluster.FindAssets("", deep); err == nil {
			t.Fatalf("found assets with only %v", localcluster.Binaries[:i])
		}
		if err := os.WriteFile(filepath.Join(assets, b), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := localcluster.FindAssets("", deep); err != nil || got != assets {
		t.Errorf("FindAssets from %s: %q %v; want %s", deep, got, err, assets)
	}
	// A configured directory wins, and is not searched around.
	if got, err := localcluster.FindAssets(assets, t.TempDir()); err != nil || got != assets {
		t.Errorf("configured: %q %v", got, err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
