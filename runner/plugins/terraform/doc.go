// Package terraform is the plugin of the "terraform" job type: it runs
// terraform (through hashicorp/terraform-exec) on a module the control plane
// sent, against state the control plane keeps behind terraform's standard
// http backend on the gateway.
//
// A job (protocol.TerraformManifest) is one operation:
//
//   - plan: init, then a saved plan (a destroy plan when Destroy is set); the
//     outputs (protocol.TerraformPlanOutputs) carry the plan file, the plan as
//     terraform printed it, its JSON (`show -json`, sensitive values
//     redacted), the counts of resources to add, change and destroy, and
//     whether anything changes.
//   - apply: init, then apply of exactly the saved plan in PlanFile; a plan
//     that no longer matches the state fails with terraform's own message. It
//     has no outputs: the control plane reads the module's outputs from the
//     state the apply stored.
//   - plan_apply: init, then "apply -auto-approve", which plans and applies
//     in one terraform process — for installs that approve every plan, where
//     nobody reviews a saved plan. Its outputs
//     (protocol.TerraformPlanApplyOutputs) are the plan's text as apply
//     printed it before applying, its counts (from terraform's "Plan:" line;
//     no JSON: that is for plan jobs, whose plans a person reviews) and
//     whether it changed anything. A plan without changes changes no
//     resource, but terraform still stores the state it refreshed when that
//     differs from the stored one (drift, a check block's result). It runs
//     the same two terraform commands a plain init/apply script would. When its
//     variables come later (deferred inputs), apply starts as soon as init
//     is done, with a named pipe as its -var-file (varsPipe): terraform
//     loads itself, its backend and the configuration, then blocks reading
//     the pipe, holding no lock, until the job writes the variables into it;
//     if they never come, the job kills it.
//   - outputs: init, then the module's outputs.
//
// The module comes in the manifest (Module, a gzipped tar archive) or, for
// a component, from the install's own registry (ModuleArtifact, fetched by
// digest with runner/ociclient).
//
// Module sync: a plan_apply job with a ModuleSync fetches the module from the
// build's source, checked against its digest, and copies the build into the
// install's registry itself: meanwhile when the destination is known (joinSync
// waits for that copy before terraform plans), or once the job's inputs bring
// the destination (awaitInputs). When the source cannot be read, the install's
// registry may hold the build already: the module is fetched from there once
// the copy (which then finds it there) is done, or, for a destination still to
// come, once the job has its inputs (Execute).
//
// The job's directory holds the module (module/, extracted from the
// manifest's archive), the variables (module/zz-outpost.auto.tfvars.json,
// named to sort after the module's own *.auto.tfvars; or the named pipe
// variables.tfvars.json, given as -var-file, which wins over them too), a
// backend override
// (module/zz_outpost_backend_override.tf: `backend "http" {}`) and an empty
// terraform CLI configuration unless the runner gave one. The backend's
// settings reach terraform only through its environment: its addresses
// through TF_HTTP_ADDRESS, TF_HTTP_LOCK_ADDRESS and TF_HTTP_UNLOCK_ADDRESS,
// the job's state credential through TF_HTTP_USERNAME (the job's ID,
// OUTPOST_JOB_ID when the manifest leaves it out) and TF_HTTP_PASSWORD:
// never on a command line, in the logs, in the saved plan, or in the data
// directory init writes (.terraform), which so serves any workspace. CHECKPOINT_DISABLE is always set.
// Providers: when the module's artifact carries the providers its build
// vendored (package providers), init takes them from that plugin directory
// only (-plugin-dir), with the build's lock file, and contacts no registry;
// otherwise terraform installs them as the runner's CLI configuration says.
// Such a job does not use the init cache.
//
// init runs without terraform-exec (which would first run `terraform
// version` for its compatibility checks: a whole terraform process); plan
// and apply run through it. The runner keeps an init cache (EnvInitCache,
// initCache): what init left in a module's directory (.terraform and
// .terraform.lock.hcl), per module archive, terraform binary, CLI
// configuration and TF_* environment, for an hour. A later job of the
// runner on the same module copies it (provider binaries hard-linked, the
// rest copied) instead of running init, and says so in its log; jobs that
// start together on a new module wait, under a file lock, for one init (at
// most initCacheWait). A failed copy costs only the reuse. Either way the job
// logs "outpost: terraform initialised". When the job is cancelled, the job process's
// context ends and terraform is interrupted (SIGINT), so it stops, saves its
// state and unlocks. The job process adopts (PR_SET_CHILD_SUBREAPER) what
// terraform's provisioners leave behind and kills it at Cleanup, so no
// `local-exec` child outlives its job — except a daemon started on purpose
// with OUTPOST_DAEMON=1 in its environment (see DaemonEnv), such as the
// example sandbox's registry.
//
// Terraform's output streams to the job's logs (except `show -json` and
// `output`, whose values may be secret); when terraform fails, the job's error is
// terraform's own diagnostics, one line each ("Error: …, with <resource>
// (<file> line N): <detail>").
//
// The terraform binary is found by Find: the runner's --terraform flag
// (OUTPOST_TERRAFORM in the job's environment), then PATH, then
// .tools/terraform/1.5.7/terraform in the working directory or one of its
// parents, where the project's scripts/tools.sh builds it.
package terraform
