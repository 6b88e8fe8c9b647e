package support

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/runner/plugins/helm"
)

// maxContainerLogBytes bounds one container's log part.
const maxContainerLogBytes = 1 << 20

// cluster adds the helm releases' status and history, and their namespaces' events, pods and logs.
func (c *collector) cluster(ctx context.Context) error {
	if c.m.Kubeconfig == "" {
		return c.unavailableEntry("cluster.txt", errNoCluster)
	}
	_, cfg, err := helm.ClientGetter(c.m.Kubeconfig, "default")
	if err != nil {
		return c.unavailableEntry("cluster.txt", err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return c.unavailableEntry("cluster.txt", fmt.Errorf("kubeconfig: %w", err))
	}
	namespaces := map[string]bool{}
	for _, r := range c.m.Releases {
		namespaces[r.Namespace] = true
		if err := c.release(r); err != nil {
			return err
		}
	}
	sorted := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		sorted = append(sorted, ns)
	}
	sort.Strings(sorted)
	for _, ns := range sorted {
		if err := c.namespace(ctx, cs, ns); err != nil {
			return err
		}
	}
	return nil
}

// release adds helm/<component>.txt: the release's status and every revision of its history (no
// values, no manifest).
func (c *collector) release(r protocol.SupportRelease) error {
	name := "helm/" + r.Component + ".txt"
	getter, _, err := helm.ClientGetter(c.m.Kubeconfig, r.Namespace)
	if err != nil {
		return c.unavailableEntry(name, err)
	}
	cfg := new(action.Configuration)
	if err := cfg.Init(getter, r.Namespace, helm.StorageDriver, func(string, ...any) {}); err != nil {
		return c.unavailableEntry(name, fmt.Errorf("helm: %w", err))
	}
	history, err := action.NewHistory(cfg).Run(r.Release)
	if err != nil {
		return c.unavailableEntry(name, fmt.Errorf("helm history of release %s in namespace %s: %w", r.Release, r.Namespace, err))
	}
	sort.Slice(history, func(i, j int) bool { return history[i].Version < history[j].Version })
	var b strings.Builder
	fmt.Fprintf(&b, "release %s in namespace %s (component %s)\n", r.Release, r.Namespace, r.Component)
	if n := len(history); n > 0 {
		last := history[n-1]
		fmt.Fprintf(&b, "status: %s (revision %d)\n", last.Info.Status, last.Version)
	}
	b.WriteString("\nhistory:\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tUPDATED\tSTATUS\tCHART\tAPP VERSION\tDESCRIPTION")
	for _, rel := range history {
		chart, app := "", ""
		if rel.Chart != nil && rel.Chart.Metadata != nil {
			chart, app = rel.Chart.Metadata.Name+"-"+rel.Chart.Metadata.Version, rel.Chart.Metadata.AppVersion
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", rel.Version, rel.Info.LastDeployed.UTC().Format(time.RFC3339),
			rel.Info.Status, chart, app, rel.Info.Description)
	}
	tw.Flush()
	return c.a.add(name, b.String())
}

// namespace adds cluster/<ns>/events.txt, pods.txt and each container's recent log.
func (c *collector) namespace(ctx context.Context, cs kubernetes.Interface, ns string) error {
	dir := "cluster/" + ns + "/"
	events, err := eventLines(ctx, cs, ns, time.Time{})
	if err != nil {
		err = c.unavailableEntry(dir+"events.txt", err)
	} else {
		err = c.a.add(dir+"events.txt", strings.Join(events, ""))
	}
	if err != nil {
		return err
	}
	pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return c.unavailableEntry(dir+"pods.txt", fmt.Errorf("listing pods: %w", err))
	}
	if err := c.a.add(dir+"pods.txt", podTable(pods.Items)); err != nil {
		return err
	}
	for _, pod := range pods.Items {
		for _, ctr := range containers(pod) {
			name := dir + "logs/" + pod.Name + "/" + ctr + ".log"
			opts := &corev1.PodLogOptions{Container: ctr, SinceSeconds: &c.m.LogSinceSeconds, TailLines: &c.m.LogTailLines,
				LimitBytes: ptr(int64(maxContainerLogBytes)), Timestamps: true}
			var log []byte
			err := notStarted(pod, ctr)
			if err == nil {
				log, err = cs.CoreV1().Pods(ns).GetLogs(pod.Name, opts).DoRaw(ctx)
				log = toLastLine(log, maxContainerLogBytes)
			}
			if err != nil {
				err = c.unavailableEntry(name, fmt.Errorf("container log of %s/%s: %w", pod.Name, ctr, err))
			} else {
				err = c.a.add(name, string(log))
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// notStarted says why a container has no log to read: its pod is on no node, or it never started (the
// API server would answer with an empty log, or an error about the kubelet).
func notStarted(pod corev1.Pod, ctr string) error {
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("pod %s is not scheduled on any node (%s): its containers have never run", pod.Name, pod.Status.Phase)
	}
	all := append(append([]corev1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...)
	for _, st := range all {
		if st.Name != ctr {
			continue
		}
		if st.State.Waiting != nil && st.LastTerminationState.Terminated == nil && st.RestartCount == 0 {
			return fmt.Errorf("container %s of pod %s has not started yet (%s)", ctr, pod.Name, st.State.Waiting.Reason)
		}
		return nil
	}
	return nil
}

// eventLines are a namespace's events, oldest first, one line each; since (when set) drops older ones.
func eventLines(ctx context.Context, cs kubernetes.Interface, ns string, since time.Time) ([]string, error) {
	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	items := list.Items
	at := func(e corev1.Event) time.Time {
		switch {
		case !e.LastTimestamp.IsZero():
			return e.LastTimestamp.Time
		case !e.EventTime.IsZero():
			return e.EventTime.Time
		}
		return e.CreationTimestamp.Time
	}
	sort.SliceStable(items, func(i, j int) bool { return at(items[i]).Before(at(items[j])) })
	var out []string
	for _, e := range items {
		if !since.IsZero() && at(e).Before(since) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s %s %s/%s: %s (x%d)\n", at(e).UTC().Format(time.RFC3339), e.Type, e.Reason,
			e.InvolvedObject.Kind, e.InvolvedObject.Name, strings.TrimSpace(e.Message), max(e.Count, 1)))
	}
	return out, nil
}

func podTable(pods []corev1.Pod) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPHASE\tNODE\tCONTAINERS\tCREATED")
	for _, p := range pods {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.Name, p.Status.Phase, p.Spec.NodeName, strings.Join(containers(p), ","),
			p.CreationTimestamp.UTC().Format(time.RFC3339))
	}
	tw.Flush()
	return b.String()
}

// containers are a pod's init and regular containers, by name.
func containers(p corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.InitContainers {
		out = append(out, c.Name)
	}
	for _, c := range p.Spec.Containers {
		out = append(out, c.Name)
	}
	return out
}

func ptr[T any](v T) *T { return &v }
