package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/outpost-dev/outpost/api/apierr"
	"github.com/outpost-dev/outpost/api/wire"
	"github.com/outpost-dev/outpost/contract"
	"github.com/outpost-dev/outpost/store"
)

// pickTargets chooses a release's targets (exactly one of all, ids, names
// or selector) among the app's installs, sorted by name; an unknown ID or
// name, a bad selector or one that matches nothing is a 4xx naming the
// field.
func pickTargets(t wire.ReleaseTargets, all []store.Install) ([]store.Install, error) {
	given := 0
	for _, g := range []bool{t.All, t.IDs != nil, t.Names != nil, len(t.Selector) > 0} {
		if g {
			given++
		}
	}
	if given != 1 {
		return nil, apierr.Invalid("installs", `say which installs, with exactly one of {"all": true}, {"ids": [...]}, {"names": [...]} or {"selector": "k=v,…"}`)
	}
	switch {
	case t.All:
		return nonEmpty(all, "installs.all", "the app has no install")
	case t.IDs != nil:
		return byKey(all, t.IDs, "installs.ids", func(i store.Install) string { return i.ID })
	case t.Names != nil:
		return byKey(all, t.Names, "installs.names", func(i store.Install) string { return i.Name })
	}
	sel, err := targetSelector(t.Selector)
	if err != nil {
		return nil, err
	}
	var out []store.Install
	for _, inst := range all {
		if sel.Matches(labels.Set(inst.Labels)) {
			out = append(out, inst)
		}
	}
	return nonEmpty(out, "installs.selector", fmt.Sprintf("%q matches no install of the app", sel.String()))
}

// targetSelector parses installs.selector: a string in Kubernetes selector
// syntax ("env=prod,tier!=free") or a map of labels that must all match.
func targetSelector(raw json.RawMessage) (labels.Selector, error) {
	var text string
	if bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		var set map[string]string
		if err := json.Unmarshal(raw, &set); err != nil {
			return nil, apierr.Invalid("installs.selector", "a map selector's values are strings: %v", err)
		}
		if err := checkLabels("installs.selector", set); err != nil {
			return nil, err
		}
		return labels.SelectorFromSet(set), nil
	}
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, apierr.Invalid("installs.selector", `is a string ("env=prod,tier!=free") or a map of labels`)
	}
	if strings.TrimSpace(text) == "" {
		return nil, apierr.Invalid("installs.selector", "is empty: it would select every install; say all instead")
	}
	sel, err := labels.Parse(text)
	if err != nil {
		return nil, apierr.Invalid("installs.selector", "%v", err)
	}
	return sel, nil
}

func nonEmpty(insts []store.Install, field, why string) ([]store.Install, error) {
	if len(insts) == 0 {
		return nil, unprocessable(field, "%s", why)
	}
	return insts, nil
}

// byKey picks the installs whose key is listed, each once.
func byKey(all []store.Install, keys []string, field string, key func(store.Install) string) ([]store.Install, error) {
	var out []store.Install
	for i, k := range keys {
		at := slices.IndexFunc(all, func(inst store.Install) bool { return key(inst) == k })
		if at < 0 {
			return nil, unprocessable(fmt.Sprintf("%s[%d]", field, i), "the app has no install %q", k)
		}
		if slices.Contains(keys[:i], k) {
			return nil, apierr.Invalid(fmt.Sprintf("%s[%d]", field, i), "%q is given twice", k)
		}
		out = append(out, all[at])
	}
	return nonEmpty(out, field, "lists no install")
}

// applyPacing checks a release's pacing and sets it on r for n installs:
// one install per batch, no pause and a halt at the first failure unless
// asked otherwise.
func applyPacing(p wire.ReleasePacing, r *store.Release, n int) error {
	r.BatchSize, r.FailureThreshold = 1, 1
	switch {
	case p.BatchSize != nil && p.BatchPercent != nil:
		return apierr.Invalid("batch_size", "give batch_size or batch_percent, not both")
	case p.BatchSize != nil && *p.BatchSize < 1:
		return apierr.Invalid("batch_size", "%d: a batch has at least one install", *p.BatchSize)
	case p.BatchSize != nil:
		r.BatchSize = *p.BatchSize
	case p.BatchPercent != nil && (*p.BatchPercent < 1 || *p.BatchPercent > 100):
		return apierr.Invalid("batch_percent", "%d: a percentage of the installs is 1 to 100", *p.BatchPercent)
	case p.BatchPercent != nil:
		r.BatchSize = int(math.Ceil(float64(n) * float64(*p.BatchPercent) / 100))
	}
	if p.FailureThreshold != nil {
		if *p.FailureThreshold < 1 {
			return apierr.Invalid("failure_threshold", "%d: the release halts after at least one failed install", *p.FailureThreshold)
		}
		r.FailureThreshold = *p.FailureThreshold
	}
	if p.PauseBetweenBatches != "" {
		d, err := time.ParseDuration(p.PauseBetweenBatches)
		if err != nil || d < 0 {
			return apierr.Invalid("pause_between_batches", "%q is not a duration (30s, 5m, 1h)", p.PauseBetweenBatches)
		}
		r.PauseMS = d.Milliseconds()
	}
	return applyGate(p, r)
}

// applyGate sets the release's health gate: its soak and what an unhealthy
// batch does.
func applyGate(p wire.ReleasePacing, r *store.Release) error {
	if p.Soak != "" {
		d, err := time.ParseDuration(p.Soak)
		if err != nil || d < 0 {
			return apierr.Invalid("soak", "%q is not a duration (2m, 10m, 1h)", p.Soak)
		}
		r.SoakMS = d.Milliseconds()
	}
	switch {
	case p.OnUnhealthy != "" && p.OnUnhealthy != contract.OnUnhealthyHalt && p.OnUnhealthy != contract.OnUnhealthyRollback:
		return apierr.Invalid("on_unhealthy", "%q: want halt or rollback", p.OnUnhealthy)
	case p.OnUnhealthy != "" && r.SoakMS == 0:
		return apierr.Invalid("on_unhealthy", "needs a soak: without one no batch's health is checked")
	case r.SoakMS > 0 && p.OnUnhealthy == "":
		r.OnUnhealthy = contract.OnUnhealthyHalt
	default:
		r.OnUnhealthy = p.OnUnhealthy
	}
	return nil
}
