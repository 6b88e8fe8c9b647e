package helm

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/outpost-dev/outpost/protocol"
)

// liveDrift is what changed in the cluster behind helm's back.
type liveDrift struct {
	objects []object // drifted, in the order checked
	text    string
}

// drift compares each object with the cluster's (liveObjects.state): an
// object whose fields were changed, or that is gone, has drifted. Its text
// is a unified diff per drifted object, "--- live/<path>" (or "/dev/null":
// gone) to "+++ b/<path>", what a deploy puts back; Secrets' values are
// redacted.
func (l liveObjects) drift(ctx context.Context, objs []object) (liveDrift, error) {
	var d liveDrift
	var text strings.Builder
	for _, o := range objs {
		s, err := l.state(ctx, o)
		if err != nil {
			return d, err
		}
		if !s.drifted() {
			continue
		}
		d.objects = append(d.objects, o)
		from := "live/" + o.path()
		if s.live == nil {
			from = "/dev/null"
		}
		live, applied := redactSecret(object{HelmObject: o.HelmObject, content: s.live}, object{HelmObject: o.HelmObject, content: s.applied})
		diff, err := unifiedDiff(from, "b/"+o.path(), live, applied)
		if err != nil {
			return d, err
		}
		text.WriteString(diff)
	}
	d.text = text.String()
	return d, nil
}

// helmObjects are the drifted objects' names.
func (d liveDrift) helmObjects() []protocol.HelmObject {
	return helmObjects(d.objects)
}

// driftedOf are the objects of after that before (the deployed revision)
// also holds, as before has them: what helm applied, which the cluster
// should still hold. Objects the chart adds or removes are the chart's
// changes, not drift.
func driftedOf(before, after []object) []object {
	keep := map[string]bool{}
	for _, o := range after {
		keep[o.key()] = true
	}
	var out []object
	for _, o := range before {
		if keep[o.key()] {
			out = append(out, o)
		}
	}
	return out
}

// repairDrift puts back, after an upgrade, what helm's merge left drifted:
// helm reverts a live edit of a built-in kind (a three-way strategic merge
// with the live object) and recreates a deleted object, but merges custom
// resources two-way (previous revision → new one), which keeps a live
// edit of a field both revisions set. Those are server-side applied
// (RepairManager, forced).
func (l liveObjects) repairDrift(ctx context.Context, out io.Writer, objs []object) error {
	d, err := l.drift(ctx, objs)
	if err != nil {
		return fmt.Errorf("checking the release's objects after the upgrade: %w", err)
	}
	for _, o := range d.objects {
		ri, err := l.resource(o)
		if err != nil {
			return err
		}
		if _, err := l.apply(ctx, ri, o, RepairManager, false); err != nil {
			return fmt.Errorf("putting back %s: %w", o.path(), err)
		}
		fmt.Fprintf(out, "outpost: %s still differed from the release after helm's upgrade: applied it server-side\n", o.path())
	}
	return nil
}
