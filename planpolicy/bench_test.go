package planpolicy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil/terraformtest"
	"github.com/outpost-dev/outpost/planpolicy"
	"github.com/outpost-dev/outpost/protocol"
)

// demoVars are values for the demo app's modules (examples/demo-app).
var demoVars = map[string]map[string]any{
	"network": {"cluster_name": "demo", "vpc_cidr": "10.42.0.0/16"},
	"database": {"name": "demo", "subnet_cidr": "10.42.1.0/24", "password": "bench-only", "tags": map[string]string{"env": "prod"},
		"data_dir": "/tmp/outpost-sandboxes/bench/database"},
	"cache": {"subnet_cidr": "10.42.2.0/24"},
	"api": {"replicas": 3, "database_url": "postgres://db", "cache_endpoint": "cache:6379", "allowed_cidrs": []string{"10.0.0.0/8"},
		"public_url": "https://demo.example", "network_id": "net-1", "schema_version": "2"},
}

// demoPlans plans each demo module named (all of them without names) with
// real terraform and returns `terraform show -json` of each plan.
func demoPlans(b testing.TB, names ...string) map[string][]byte {
	tf := terraformtest.Find(b)
	plans := map[string][]byte{}
	for name, vars := range demoVars {
		if len(names) > 0 && !slices.Contains(names, name) {
			continue
		}
		dir := b.TempDir()
		if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "demo-app", "modules", name))); err != nil {
			b.Fatal(err)
		}
		vb, _ := json.Marshal(vars)
		if err := os.WriteFile(filepath.Join(dir, "bench.auto.tfvars.json"), vb, 0o600); err != nil {
			b.Fatal(err)
		}
		for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false", "-out=plan"}} {
			if out, err := exec.Command(tf, append([]string{"-chdir=" + dir}, args...)...).CombinedOutput(); err != nil {
				b.Fatalf("%s %v: %v\n%s", name, args, err, out)
			}
		}
		out, err := exec.Command(tf, "-chdir="+dir, "show", "-json", "plan").Output()
		if err != nil {
			b.Fatalf("%s show: %v", name, err)
		}
		plans[name] = out
	}
	return plans
}

// BenchmarkCheckDemoPlans: what the policy check adds to a plan, for ten
// policies (the four examples and six in testdata/bench) on each of the
// demo's terraform plans: decoding `terraform show -json` and evaluating
// them (show itself runs for every plan anyway). Reports p50 and p99.
func BenchmarkCheckDemoPlans(b *testing.B) {
	plans := demoPlans(b)
	var mods []protocol.PolicyModule
	for _, d := range []string{examplesDir, "testdata/bench"} {
		m, err := planpolicy.ReadDir(d)
		if err != nil {
			b.Fatal(err)
		}
		mods = append(mods, m...)
	}
	ctx := context.Background()
	c, err := planpolicy.NewChecker(ctx, mods, "")
	if err != nil || c.Len() != 10 {
		b.Fatalf("checker: %v, %d policies (want 10)", err, c.Len())
	}
	names := slices.Sorted(maps.Keys(plans))
	var took []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		var plan any
		dec := json.NewDecoder(bytes.NewReader(plans[names[i%len(names)]]))
		dec.UseNumber()
		if err := dec.Decode(&plan); err != nil {
			b.Fatal(err)
		}
		res := c.Check(ctx, planpolicy.Input{Kind: planpolicy.KindTerraform, Terraform: plan,
			Install: protocol.PolicyInstall{ID: "ins_bench", Labels: map[string]string{"env": "prod"}, Registry: "127.0.0.1:5000"}})
		if len(res) != 10 || planpolicy.Denied(res) != nil {
			b.Fatalf("results %+v", res)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
