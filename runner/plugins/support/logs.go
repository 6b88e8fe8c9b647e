package support

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// NewKubeLogs returns a kube_logs plugin for one job: it prints one namespace's (or workload's)
// events and container logs since a time, redacted, as the job's log lines.
func NewKubeLogs() plugins.Plugin { return &kubeLogs{} }

type kubeLogs struct {
	m protocol.KubeLogsManifest
}

func (p *kubeLogs) Validate(manifest json.RawMessage) error {
	if err := plugins.DecodeManifest(manifest, &p.m); err != nil {
		return err
	}
	switch m := &p.m; {
	case m.Kubeconfig == "":
		return errors.New("kubeconfig: required (the install has no cluster)")
	case m.Namespace == "":
		return errors.New("namespace: required")
	case m.SinceSeconds < 0:
		return fmt.Errorf("since_seconds: must not be negative, got %d", m.SinceSeconds)
	case m.TailLines < 0:
		return fmt.Errorf("tail_lines: must not be negative, got %d", m.TailLines)
	case m.SinceSeconds == 0:
		m.SinceSeconds = defaultLogSince
	}
	return nil
}

func (p *kubeLogs) Execute(ctx context.Context, run plugins.Run) (int, error) {
	out := (&logsOut{w: run.Stdout, r: newRedactor(p.m.Redact), left: maxLogsRequestBytes}).printf
	_, cfg, err := helm.ClientGetter(p.m.Kubeconfig, p.m.Namespace)
	if err != nil {
		return 0, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, fmt.Errorf("kubeconfig: %w", err)
	}
	since := time.Now().Add(-time.Duration(p.m.SinceSeconds) * time.Second)
	events, err := eventLines(ctx, cs, p.m.Namespace, since)
	if err != nil {
		return 0, err
	}
	out("== events of namespace %s since %s (%d)\n", p.m.Namespace, since.UTC().Format(time.RFC3339), len(events))
	for _, e := range events {
		if p.m.Workload == "" || strings.Contains(e, "/"+p.m.Workload) {
			out("%s", e)
		}
	}
	pods, err := cs.CoreV1().Pods(p.m.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing pods: %w", err)
	}
	for _, pod := range pods.Items {
		if p.m.Workload != "" && !strings.HasPrefix(pod.Name, p.m.Workload) {
			continue
		}
		for _, ctr := range containers(pod) {
			p.containerLog(ctx, cs, pod, ctr, out)
		}
	}
	return 0, nil
}

// containerLog prints one container's log since the manifest's time, or why it is unavailable.
func (p *kubeLogs) containerLog(ctx context.Context, cs kubernetes.Interface, pod corev1.Pod, ctr string, out func(string, ...any)) {
	opts := &corev1.PodLogOptions{Container: ctr, SinceSeconds: &p.m.SinceSeconds, Timestamps: true,
		LimitBytes: ptr(int64(maxContainerLogBytes))}
	if p.m.TailLines > 0 {
		opts.TailLines = &p.m.TailLines
	}
	var log []byte
	err := notStarted(pod, ctr)
	if err == nil {
		log, err = cs.CoreV1().Pods(p.m.Namespace).GetLogs(pod.Name, opts).DoRaw(ctx)
		log = toLastLine(log, maxContainerLogBytes)
	}
	if err != nil {
		out("== %s/%s: unavailable: %v\n", pod.Name, ctr, err)
		return
	}
	out("== %s/%s\n%s", pod.Name, ctr, log)
	if len(log) > 0 && log[len(log)-1] != '\n' {
		out("\n")
	}
}

func (p *kubeLogs) Outputs() (json.RawMessage, error) { return nil, nil }
func (p *kubeLogs) Cleanup() error                    { return nil }
