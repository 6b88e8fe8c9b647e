package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/outpost-dev/outpost/internal/testutil"
)

type supportBundle struct {
	ID          string   `json:"id"`
	WorkflowID  string   `json:"workflow_id"`
	Status      string   `json:"status"`
	Error       string   `json:"error"`
	Parts       []string `json:"parts"`
	Unavailable []string `json:"unavailable"`
	SizeBytes   int64    `json:"size_bytes"`
	SHA256      string   `json:"sha256"`
	DownloadURL string   `json:"download_url"`
}

// A support bundle of the demo install holds every listed part — the runner's log, the job history,
// the terraform resources of each workspace, the helm release's status and history, the release
// namespace's events, pods and container logs (unavailable here: the test cluster has no kubelet) —
// and none of the install's sensitive values, searched for in every byte of the archive. Then the CLI's
// bundles and a logs request of the release's namespace.
func TestSupportBundleOfTheDemoInstall(t *testing.T) {
	s := newStack(t, stackOptions{})
	const secret = "s3cret-bundle-pa55word"
	inst := s.newDemoInstall("cust-sb", secret)
	s.provisioned(inst, 5*time.Minute)
	t.Cleanup(func() { s.waitOp(inst, s.startOp(inst, "/deprovision", nil).ID, 5*time.Minute) })

	// Something to find in the release's namespace: an event that quotes the secret, and a pod no
	// kubelet will ever run.
	ctx := context.Background()
	cs := s.kube(inst)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-debug", Namespace: "demo"},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "shell", Image: "busybox"}}}}
	if _, err := cs.CoreV1().Pods("demo").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "web-debug.login", Namespace: "demo"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "web-debug", Namespace: "demo"},
		Reason:         "LoginFailed", Type: "Warning", Count: 3, LastTimestamp: metav1.Now(),
		Message: "could not log in to the database with " + secret + " (Authorization: Bearer abcdef123456)"}
	if _, err := cs.CoreV1().Events("demo").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	var b supportBundle
	if code := s.do("POST", "/v1/installs/"+inst+"/support-bundles", nil, &b); code != http.StatusAccepted {
		t.Fatalf("create a support bundle: %d %+v", code, b)
	}
	for deadline := time.Now().Add(5 * time.Minute); b.Status != "succeeded"; {
		if b.Status == "failed" || b.Status == "cancelled" || time.Now().After(deadline) {
			t.Fatalf("support bundle: %+v", b)
		}
		s.do("GET", "/v1/installs/"+inst+"/support-bundles/"+b.ID+"?wait=30", nil, &b)
	}
	var list struct {
		SupportBundles []supportBundle `json:"support_bundles"`
	}
	if s.do("GET", "/v1/installs/"+inst+"/support-bundles", nil, &list); len(list.SupportBundles) != 1 || list.SupportBundles[0].ID != b.ID {
		t.Fatalf("list: %+v", list)
	}

	archive := s.download(b.DownloadURL)
	if sum := sha256.Sum256(archive); int64(len(archive)) != b.SizeBytes || hex.EncodeToString(sum[:]) != b.SHA256 {
		t.Fatalf("downloaded %d bytes, sha256 %x; the bundle says %d bytes, %s", len(archive), sum, b.SizeBytes, b.SHA256)
	}
	files, raw := untar(t, archive)
	want := map[string]string{
		"bundle/runner.log":                            "runner started",
		"bundle/jobs.txt":                              "terraform",
		"bundle/terraform/sandbox.txt":                 "terraform_data.registry",
		"bundle/terraform/database.txt":                "terraform_data.database",
		"bundle/helm/web.txt":                          "deployed",
		"bundle/cluster/demo/events.txt":               "LoginFailed",
		"bundle/cluster/demo/pods.txt":                 "web-debug",
		"bundle/cluster/demo/logs/web-debug/shell.log": "unavailable: ",
		"bundle/index.txt":                             "cluster/demo/events.txt",
	}
	for name, text := range want {
		if !strings.Contains(files[name], text) {
			t.Errorf("%s does not hold %q:\n%s", name, text, files[name])
		}
	}
	if ev := files["bundle/cluster/demo/events.txt"]; !strings.Contains(ev, "with [REDACTED]") || !strings.Contains(ev, "Bearer [REDACTED]") {
		t.Errorf("the event's secret and token are not redacted:\n%s", ev)
	}
	if len(b.Parts) != len(files) || len(b.Unavailable) == 0 {
		t.Errorf("the bundle lists parts %v and unavailable %v; the archive holds %d files", b.Parts, b.Unavailable, len(files))
	}

	// Every sensitive value of the install (its input, and its sensitive outputs: the database URL,
	// the cluster's kubeconfig, the registry's password), in the archive and in its gzip.
	sensitive := []string{secret}
	for _, step := range []string{"sandbox", "network", "database", "cache", "api", "cluster"} {
		for name, o := range s.stepOutputs(inst, step).Outputs {
			if !o.Sensitive {
				continue
			}
			var text string
			if json.Unmarshal(o.Value, &text) != nil {
				text = string(o.Value)
			}
			t.Logf("searching for the sensitive output %s.%s (%d bytes)", step, name, len(text))
			sensitive = append(sensitive, text)
		}
	}
	if len(sensitive) < 3 {
		t.Fatalf("only %d sensitive values to search for", len(sensitive))
	}
	for _, v := range sensitive {
		if bytes.Contains(raw, []byte(v)) || bytes.Contains(archive, []byte(v)) {
			t.Errorf("the archive holds a sensitive value (%d bytes)", len(v))
		}
	}
	s.checkBundleHistory(b.WorkflowID, secret)
	checkBundlesInDashboard(t, s, archive)

	// The CLI: create and download at once, list both, download the first; a missing one is exit 4.
	c := newCLI(t, s)
	dir := t.TempDir()
	c.ok(dir, "support-bundle", "create", inst, "--out", "second.tar.gz")
	second, err := os.ReadFile(filepath.Join(dir, "second.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if files, _ := untar(t, second); !strings.Contains(files["bundle/helm/web.txt"], "deployed") {
		t.Fatalf("the CLI's bundle holds %d files, no helm release", len(files))
	}
	if out := c.ok("", "support-bundle", "list", inst); strings.Count(out, "succeeded") != 3 || !strings.Contains(out, b.ID) {
		t.Fatalf("support-bundle list:\n%s", out)
	}
	c.ok(dir, "support-bundle", "download", inst, b.ID)
	if first, err := os.ReadFile(filepath.Join(dir, "support-bundle-"+b.ID+".tar.gz")); err != nil || !bytes.Equal(first, archive) {
		t.Fatalf("the CLI's download of %s differs from the API's (%v)", b.ID, err)
	}
	c.fails(4, "no support bundle sb_missing", "support-bundle", "download", inst, "sb_missing")
	c.ok("", "support-bundle", "delete", inst, b.ID)
	if out := c.ok("", "support-bundle", "list", inst); strings.Contains(out, b.ID) || strings.Count(out, "succeeded") != 2 {
		t.Fatalf("support-bundle list after deleting %s:\n%s", b.ID, out)
	}
	c.fails(4, "no support bundle "+b.ID, "support-bundle", "delete", inst, b.ID)

	// A logs request streams the namespace's events and why the pod has no log, redacted.
	logs := c.ok("", "support-bundle", "logs", inst, "--namespace", "demo", "--workload", "web-debug", "--since", "1h")
	if !strings.Contains(logs, "LoginFailed") || !strings.Contains(logs, "with [REDACTED]") || strings.Contains(logs, secret) ||
		!strings.Contains(logs, "web-debug/shell: unavailable: pod web-debug is not scheduled") {
		t.Fatalf("support-bundle logs:\n%s", logs)
	}
	c.fails(1, "namespace", "support-bundle", "logs", inst, "--namespace", "Not_A_Namespace")
	// Only the namespaces the install's releases use: not the rest of the customer's cluster.
	c.fails(1, `"kube-system" is not a namespace the install's releases use (demo)`, "support-bundle", "logs", inst, "--namespace", "kube-system")
}

// checkBundlesInDashboard: the install's page lists the bundle with a download link that serves the
// same archive (the session cookie is the credential); its button collects another one.
func checkBundlesInDashboard(t *testing.T, s *stack, archive []byte) {
	t.Helper()
	br := newBrowser(t)
	signIn(br, s)
	br.click(`tr[data-install="cust-sb"] a`)
	br.text(`tr[data-bundle]`, "succeeded", time.Minute)
	n := eval[int](br, `fetch(document.querySelector("tr[data-bundle] a.download").href).then((r) => r.arrayBuffer()).then((b) => b.byteLength)`)
	if n != len(archive) {
		t.Fatalf("the dashboard's download link served %d bytes; the archive has %d", n, len(archive))
	}
	br.click("#support-bundle")
	br.click("#confirm-ok")
	br.text("#action-message", "Support bundle: started.", time.Minute)
	waitFor(t, 3*time.Minute, "two collected bundles on the page", func() bool {
		return eval[int](br, `[...document.querySelectorAll("tr[data-bundle]")].filter((r) => r.innerText.includes("succeeded")).length`) == 2
	})
}

// checkBundleHistory replays the bundle's workflow and checks its history holds no secret.
func (s *stack) checkBundleHistory(workflowID, secret string) {
	t, ctx := s.t, context.Background()
	t.Helper()
	s.replay(workflowID)
	iter := s.client.GetWorkflowHistory(ctx, workflowID, "", false, 0)
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if raw, _ := json.Marshal(e); bytes.Contains(raw, []byte(secret)) {
			t.Fatalf("Temporal history of %s holds the secret (event %d)", workflowID, e.EventId)
		}
	}
}

// download GETs a binary answer of the API.
func (s *stack) download(path string) []byte {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.apiURL+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/gzip" {
		s.t.Fatalf("GET %s: %d %s, %v: %.300s", path, resp.StatusCode, resp.Header.Get("Content-Type"), err, body)
	}
	return body
}

// untar reads a tar.gz: its files' contents by name, and the whole decompressed tar.
func untar(t *testing.T, archive []byte) (map[string]string, []byte) {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	testutil.ReadTar(t, bytes.NewReader(raw), func(h *tar.Header, body string) { files[h.Name] = body })
	return files, raw
}
