package planpolicy

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/outpost-dev/outpost/protocol"
)

// EvalTimeout bounds the evaluation of one set of policies on one plan.
const EvalTimeout = 30 * time.Second

// Input kinds: what the plan is of.
const (
	KindTerraform   = "terraform_plan"
	KindHelm        = "helm_manifests"
	KindDockerBuild = "docker_build"
)

// Input is what a policy sees as `input` (schemas/plan-policy-input.schema.json).
type Input struct {
	Kind    string                 `json:"kind"`
	Install protocol.PolicyInstall `json:"install"`
	Step    string                 `json:"step,omitempty"`
	Destroy bool                   `json:"destroy"`
	// Terraform is `terraform show -json` of the plan, sensitive values redacted.
	Terraform any `json:"terraform,omitempty"`
	// Manifests are a chart's rendered objects.
	Manifests []any `json:"manifests,omitempty"`
	// DockerBuild is a build's Dockerfile and build arguments.
	DockerBuild *DockerBuild `json:"docker_build,omitempty"`
}

// DockerBuild is a docker_build's input.
type DockerBuild struct {
	Dockerfile string            `json:"dockerfile"`
	BuildArgs  map[string]string `json:"build_args"`
}

// Checker holds the compiled sets a job checks its plans against.
type Checker struct{ sets []*Set }

// NewChecker compiles the vendor's modules (from the manifest) and the
// customer's (from the runner's directory, "" for none). A module that does
// not compile is an error naming its source: the job cannot pass.
func NewChecker(ctx context.Context, vendor []protocol.PolicyModule, customerDir string) (*Checker, error) {
	c := &Checker{}
	if len(vendor) > 0 {
		s, err := Compile(ctx, protocol.PolicyVendor, vendor)
		if err != nil {
			return nil, fmt.Errorf("the vendor's plan policies: %w", err)
		}
		c.sets = append(c.sets, s)
	}
	if customerDir != "" {
		mods, err := ReadDir(customerDir)
		if err != nil {
			return nil, err
		}
		s, err := Compile(ctx, protocol.PolicyCustomer, mods)
		if err != nil {
			return nil, fmt.Errorf("the customer's plan policies (%s): %w", customerDir, err)
		}
		c.sets = append(c.sets, s)
	}
	return c, nil
}

// Len is how many policies the checker evaluates.
func (c *Checker) Len() int {
	n := 0
	for _, s := range c.sets {
		n += s.Len()
	}
	return n
}

// Check evaluates every policy on in: the customer's after the vendor's.
func (c *Checker) Check(ctx context.Context, in Input) []protocol.PolicyResult {
	ctx, cancel := context.WithTimeout(ctx, EvalTimeout)
	defer cancel()
	parsed, err := ast.InterfaceToValue(in.value())
	var out []protocol.PolicyResult
	for _, s := range c.sets {
		out = append(out, s.eval(ctx, parsed, err)...)
	}
	return out
}

// value is in as the JSON object policies see, built without a round trip
// through JSON (a plan can be large).
func (in Input) value() map[string]any {
	inst := map[string]any{"id": in.Install.ID}
	if in.Install.Name != "" {
		inst["name"] = in.Install.Name
	}
	if in.Install.Registry != "" {
		inst["registry"] = in.Install.Registry
	}
	if len(in.Install.Labels) > 0 {
		labels := make(map[string]any, len(in.Install.Labels))
		for k, v := range in.Install.Labels {
			labels[k] = v
		}
		inst["labels"] = labels
	}
	v := map[string]any{"kind": in.Kind, "install": inst, "destroy": in.Destroy}
	if in.Step != "" {
		v["step"] = in.Step
	}
	if in.Terraform != nil {
		v["terraform"] = in.Terraform
	}
	if in.Manifests != nil {
		v["manifests"] = in.Manifests
	}
	if b := in.DockerBuild; b != nil {
		args := make(map[string]any, len(b.BuildArgs))
		for k, a := range b.BuildArgs {
			args[k] = a
		}
		v["docker_build"] = map[string]any{"dockerfile": b.Dockerfile, "build_args": args}
	}
	return v
}

// Denied is the error of results that do not all pass, naming each policy
// and its messages; nil when they all passed.
func Denied(results []protocol.PolicyResult) error {
	var lines []string
	for _, r := range results {
		for _, m := range r.Deny {
			lines = append(lines, fmt.Sprintf("%s policy %s denies: %s", r.Source, r.Policy, m))
		}
		if r.Error != "" {
			lines = append(lines, fmt.Sprintf("%s policy %s failed: %s", r.Source, r.Policy, r.Error))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return fmt.Errorf("plan policies: %s", strings.Join(lines, "; "))
}

// deniedBy finds each policy in a message of Denied.
var deniedBy = regexp.MustCompile(`(vendor|customer) policy (\S+) (?:denies|failed): `)

// DeniedBy names the policies ("vendor policy outpost.x") that a message
// made by Denied (as a job's error carries it) says denied a plan, each
// once, in order; none when msg is not such a message.
func DeniedBy(msg string) []string {
	_, rest, ok := strings.Cut(msg, "plan policies: ")
	if !ok {
		return nil
	}
	var out []string
	for _, m := range deniedBy.FindAllStringSubmatch(rest, -1) {
		if name := m[1] + " policy " + m[2]; !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// Report writes what each policy said, for a job's log.
func Report(w interface{ Write([]byte) (int, error) }, results []protocol.PolicyResult) {
	for _, r := range results {
		verdict := "passed"
		switch {
		case r.Error != "":
			verdict = "failed: " + r.Error
		case len(r.Deny) > 0:
			verdict = "denies: " + strings.Join(r.Deny, "; ")
		case len(r.Warn) > 0:
			verdict = "warns: " + strings.Join(r.Warn, "; ")
		}
		fmt.Fprintf(w, "outpost: %s policy %s %s\n", r.Source, r.Policy, verdict)
	}
}

// EnvDir is the job environment variable naming the customer's policy
// directory: the runner sets it from --plan-policies; a manifest cannot.
const EnvDir = "OUTPOST_PLAN_POLICIES"
