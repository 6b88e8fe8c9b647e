package localcluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// waitReady waits for the node object NodeName to be Ready without taints
// (the controller manager lifts the not-ready one), failing early when one
// of the node's processes exits.
func (n *Node) waitReady(ctx context.Context, c *Cluster) error {
	cs, err := kubernetes.NewForConfig(c.RESTConfig())
	if err != nil {
		return err
	}
	last := "not registered"
	for {
		if err := n.exited(); err != nil {
			return err
		}
		node, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err == nil {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady {
					last = fmt.Sprintf("%s: %s", cond.Reason, cond.Message)
					if cond.Status == corev1.ConditionTrue {
						if len(node.Spec.Taints) == 0 {
							return nil
						}
						last = fmt.Sprintf("Ready, tainted %v", node.Spec.Taints)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("node %s not Ready (%s): %w%s", NodeName, last, ctx.Err(), n.quoteAll())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// quoteAll quotes the last output of every process of the node.
func (n *Node) quoteAll() string {
	s := ""
	for _, p := range n.procs {
		s += p.out.quote(p.name)
	}
	return s
}
