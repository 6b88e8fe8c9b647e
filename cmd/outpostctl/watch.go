package main

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/outpost-dev/outpost/apiclient"
)

// stepView is what the progress views show of one step.
type stepView struct {
	Name, Status, Error, Plan string
	Job                       string   // the job it runs now, if any
	Policies                  []string // what its plan policies said (policyLines)
	LeftBehind                []string // what a deprovision with forget left of it
	Destroys                  bool     // it destroys (a deprovision's or teardown's step)
	Add, Change, Destroy      int
	Started, Finished         *time.Time
}

// snapshot is the operation as last read, with the last log line of each
// running step's job (by step name).
type snapshot struct {
	op    apiclient.Operation
	body  []byte
	steps []stepView
	logs  map[string]string
	deps  map[string][]string // by component: those it depends on (nil when unknown)
}

// pollWait is how long each read of the operation is held by the API when
// it has not finished (seconds): a change shows within about that.
const pollWait = 1

// watcher reads an operation until it finishes and, when logs, the
// running steps' jobs' logs from where it last read them.
type watcher struct {
	a      *api
	inst   apiclient.Install
	op     apiclient.Operation // as started: its ID and config version
	logs   bool
	cursor map[string]string   // by job: the log cursor to read on from
	last   map[string]string   // by job: its last log line
	deps   map[string][]string // the app's dependencies (with the hooks': withHookDeps)
}

func newWatcher(a *api, inst apiclient.Install, op apiclient.Operation, logs bool) *watcher {
	return &watcher{a: a, inst: inst, op: op, logs: logs, cursor: map[string]string{}, last: map[string]string{}}
}

// run sends each snapshot until the operation has finished (nil) or a
// read fails (ctx's end included).
func (w *watcher) run(ctx context.Context, send func(snapshot)) error {
	w.deps = w.a.dependencies(ctx, w.inst.AppId, w.op.ConfigVersion)
	for wait := 0; ; wait = pollWait { // the first read at once
		s, err := w.read(ctx, wait)
		if err != nil {
			return err
		}
		send(s)
		if s.op.FinishedAt != nil {
			return nil
		}
	}
}

func (w *watcher) read(ctx context.Context, wait int) (snapshot, error) {
	r, err := check(w.a.GetOperationWithResponse(ctx, w.inst.Id, w.op.Id, &apiclient.GetOperationParams{Wait: &wait}))
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{op: *r.JSON200, body: r.Body, steps: stepsOf(*r.JSON200), logs: map[string]string{},
		deps: withHookDeps(w.deps, *r.JSON200)}
	sortSteps(s.steps, stepLevels(s.deps))
	if !w.logs {
		return s, nil
	}
	for _, st := range s.steps {
		if st.Job == "" {
			continue
		}
		if err := w.readLog(ctx, st.Job); err != nil {
			return snapshot{}, err
		}
		s.logs[st.Name] = w.last[st.Job]
	}
	return s, nil
}

// readLog reads the job's log chunks after its cursor and keeps the last
// non-blank line.
func (w *watcher) readLog(ctx context.Context, job string) error {
	limit := 1000
	p := apiclient.GetJobLogsParams{Limit: &limit}
	if c := w.cursor[job]; c != "" {
		p.After = &c
	}
	r, err := check(w.a.GetJobLogsWithResponse(ctx, job, &p))
	if err != nil {
		return err
	}
	for _, ch := range r.JSON200.Chunks {
		for _, line := range strings.Split(ansi.Strip(ch.Data), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				w.last[job] = line
			}
		}
	}
	if r.JSON200.NextCursor != "" {
		w.cursor[job] = r.JSON200.NextCursor
	}
	return nil
}

// stepsOf is the operation's steps in the order the API gives (no fixed
// one: see sortSteps).
func stepsOf(op apiclient.Operation) []stepView {
	if op.Steps == nil {
		return nil
	}
	var out []stepView
	for _, s := range *op.Steps {
		v := stepView{Name: s.Name, Status: s.Status, Error: deref(s.Error), Plan: deref(s.Plan), Policies: policyLines(s.Policies),
			Add: derefInt(s.Add), Change: derefInt(s.Change), Destroy: derefInt(s.DestroyCount),
			Started: s.StartedAt, Finished: s.FinishedAt, Destroys: s.Destroy != nil && *s.Destroy, LeftBehind: deref2(s.LeftBehind)}
		switch s.Status {
		case "syncing":
			v.Job = deref(s.SyncJobId)
		case "planning":
			v.Job = deref(s.PlanJobId)
		case "applying":
			v.Job = deref(s.ApplyJobId)
			if v.Job == "" {
				v.Job = deref(s.PlanJobId)
			}
		}
		out = append(out, v)
	}
	return out
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefInt(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}

// stepLevels is each step's depth in the app's dependencies (deps, from
// the operation's config version, which older operations' steps lack): the
// sandbox 0, a component one more than the deepest it depends on. With no
// deps the steps are in name order.
func stepLevels(deps map[string][]string) map[string]int {
	if deps == nil {
		return nil
	}
	levels := map[string]int{"sandbox": 0}
	var level func(name string, depth int) int
	level = func(name string, depth int) int {
		if l, ok := levels[name]; ok || depth > len(deps) { // depth: a cycle ends
			return l
		}
		l := 1
		for _, d := range deps[name] {
			l = max(l, level(d, depth+1)+1)
		}
		levels[name] = l
		return l
	}
	for name := range deps {
		level(name, 0)
	}
	return levels
}

// sortSteps puts the steps in the order they run: by dependency level
// (reversed for a step that destroys), then by name; a step the levels
// lack comes last.
func sortSteps(steps []stepView, levels map[string]int) {
	key := func(s stepView) int {
		l, ok := levels[s.Name]
		switch {
		case !ok && s.Name == "sandbox":
			l = 0
		case !ok:
			return 1 << 20
		}
		if s.Destroys {
			return -l
		}
		return l
	}
	slices.SortStableFunc(steps, func(a, b stepView) int {
		return cmp.Or(cmp.Compare(key(a), key(b)), strings.Compare(a.Name, b.Name))
	})
}

// parentOf is the step name hangs below in the live tree: the first step
// placed before it that it depends on or, for a destroy (run in reverse),
// that depends on it; "" (the operation) when none is.
func parentOf(name string, deps map[string][]string, placed map[string]bool) string {
	for _, d := range deps[name] {
		if placed[d] {
			return d
		}
	}
	for _, other := range slices.Sorted(maps.Keys(deps)) {
		if placed[other] && slices.Contains(deps[other], name) {
			return other
		}
	}
	return ""
}
