package terraform_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/outpost-dev/outpost/internal/testutil"
	"github.com/outpost-dev/outpost/protocol"
	"github.com/outpost-dev/outpost/store"
)

// cached is a module with no provider to install: what matters here is
// which job ran init, and that each one's state went to its own workspace.
func cachedModule(t *testing.T, tag string) []byte {
	return testutil.TarGz(t, map[string]string{"main.tf": `variable "name" {
  type = string
}

resource "terraform_data" "this" {
  input = "` + tag + `/${var.name}"
}

output "value" {
  value = terraform_data.this.output
}
`})
}

// ranInit says the job's log shows terraform init itself running (rather
// than the job reusing the runner's init of its module).
func ranInit(logs string) bool { return strings.Contains(logs, "Initializing the backend") }

const reusedInit = "outpost: terraform initialised: reused this runner's init of the same module"

// The runner keeps what terraform init left for a module: a later job on the
// same module archive, on another workspace, reuses it instead of running
// init, and its state goes to its own workspace (the backend's address and
// credentials come from the job's environment, not from the kept init, which
// holds none of them). Jobs that start together on a new module wait for one
// init; an init older than an hour is made again; a changed module is
// initialised anew.
func TestInitCache(t *testing.T) {
	h := newHarness(t)
	planApply := func(key, ws string, mod []byte) protocol.TerraformManifest {
		m := h.manifest(protocol.TerraformPlanApply, ws, mod)
		m.Variables = map[string]json.RawMessage{"name": json.RawMessage(`"` + key + `"`)}
		return m
	}
	// runAll runs the jobs at once (the harness's runner runs two at a
	// time), and checks each one succeeded and wrote its own workspace.
	runAll := func(mod []byte, tag string, keys ...string) (logs map[string]string, passwords []string) {
		t.Helper()
		logs = map[string]string{}
		jobs := map[string]store.Job{}
		for _, key := range keys {
			j, tok := h.enqueue(key, planApply(key, h.inst.ID+"."+key, mod))
			jobs[key], passwords = j, append(passwords, tok)
		}
		for _, key := range keys {
			h.succeeded(h.wait(jobs[key].ID), nil)
			logs[key] = h.logs(jobs[key].ID)
			if got, want := string(h.stateOutputs(h.inst.ID + "." + key)["value"].Value), `"`+tag+"/"+key+`"`; got != want {
				t.Errorf("workspace of %s: value %s, want %s", key, got, want)
			}
		}
		return logs, passwords
	}

	a := cachedModule(t, "a")
	logs, passwords := runAll(a, "a", "first")
	if !ranInit(logs["first"]) || !strings.Contains(logs["first"], "outpost: terraform initialised\n") {
		t.Fatalf("the first job of a module should run init:\n%s", logs["first"])
	}
	// Two more jobs of the same module, on other workspaces, at once.
	more, morePasswords := runAll(a, "a", "second", "third")
	passwords = append(passwords, morePasswords...)
	for key, l := range more {
		if ranInit(l) || !strings.Contains(l, reusedInit) {
			t.Errorf("%s, a later job of the same module, should reuse the init:\n%s", key, l)
		}
	}

	// A new module: of the jobs that start together, one runs init and the
	// other waits for it, then reuses it.
	b := cachedModule(t, "b")
	together, bPasswords := runAll(b, "b", "b1", "b2")
	passwords = append(passwords, bPasswords...)
	if ranInit(together["b1"]) == ranInit(together["b2"]) {
		t.Errorf("want exactly one of two jobs started together on a new module to run init:\nb1:\n%s\nb2:\n%s", together["b1"], together["b2"])
	}

	// The kept inits hold no job's state credential.
	cache := filepath.Join(h.workDir, "cache", "terraform-init")
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	err = filepath.WalkDir(cache, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		kept++
		b, err := os.ReadFile(path)
		for _, p := range passwords {
			if strings.Contains(string(b), p) {
				t.Errorf("%s holds a job's state password", path)
			}
		}
		return err
	})
	if err != nil || kept == 0 {
		t.Fatalf("the cache holds %d files (%v): want the inits of two modules", kept, err)
	}

	// An init older than an hour is made again.
	old := time.Now().Add(-2 * time.Hour)
	for _, e := range entries {
		if e.IsDir() {
			if err := os.Chtimes(filepath.Join(cache, e.Name()), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	if again, _ := runAll(a, "a", "later"); !ranInit(again["later"]) {
		t.Errorf("an init two hours old should be made again:\n%s", again["later"])
	}
	// Making it pruned the entries too old to be reused: b's.
	after, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range after {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if len(dirs) != 1 {
		t.Errorf("the cache holds %v, want only the init just made (the other, two hours old, pruned)", dirs)
	}
	// A changed module is initialised anew.
	if changed, _ := runAll(cachedModule(t, "c"), "c", "changed"); !ranInit(changed["changed"]) {
		t.Errorf("a changed module should run init:\n%s", changed["changed"])
	}
}
