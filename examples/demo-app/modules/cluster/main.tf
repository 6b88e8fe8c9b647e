# The install's Kubernetes cluster, where the web chart deploys (its
# kubeconfig names this component's output). A cloud app would create EKS or
# AKS here or in the sandbox; this local one runs etcd and kube-apiserver (no
# kubelet: objects are stored, pods never run) with outpost-cluster as a
# daemon, which finds them through OUTPOST_KUBE_ASSETS. A component rather
# than part of the sandbox, so the terraform components need not wait for it.

terraform {
  required_version = ">= 1.5.0"
}

variable "install_id" {
  type        = string
  description = "The install's ID: names the cluster's data directory"
}

variable "local_dir" {
  type        = string
  description = "Where local stand-ins keep their data (the sandbox's local_dir output)"
}

# The cluster's data directory: gone with the install (destroy stops the
# cluster first).
resource "terraform_data" "cluster_api" {
  input = {
    dir = "${var.local_dir}/${var.install_id}/cluster"
  }

  provisioner "local-exec" {
    when    = destroy
    command = <<-EOT
      if [ -s "$DIR/pid" ]; then
        pid=$(cat "$DIR/pid"); kill "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
      fi
      rm -rf "$DIR"
      rmdir "$(dirname "$DIR")" 2>/dev/null || true
      echo "install cluster stopped"
    EOT
    environment = {
      DIR = self.output.dir
    }
  }
}

# The cluster's processes. One that is not running (its machine or container
# restarted) makes the plan replace this, which starts it again on the same
# data: as the sandbox's registry_process (read there why).
locals {
  cluster_dir        = terraform_data.cluster_api.output.dir
  cluster_pid        = try(trimspace(file("${var.local_dir}/${var.install_id}/cluster/pid")), "")
  cluster_running    = local.cluster_pid != "" && strcontains(try(file("/proc/${local.cluster_pid}/cmdline"), ""), "outpost-cluster")
  cluster_generation = local.cluster_running ? try(trimspace(file("${var.local_dir}/${var.install_id}/cluster/generation")), "") : "started ${plantimestamp()}"
}

resource "terraform_data" "cluster_process" {
  triggers_replace = local.cluster_generation
  input            = local.cluster_dir

  provisioner "local-exec" {
    # Waits while outpost-cluster lives (it may first wait for its binaries,
    # when OUTPOST_KUBE_ASSETS_WAIT says so), passing its log on.
    command = <<-EOT
      mkdir -p "$DIR"
      # One that runs with its kubeconfig written is kept; one left starting
      # by an earlier attempt (killed, its lease lost) is stopped first, and
      # gone (its pid file removed) before another starts on its data.
      if [ -s "$DIR/pid" ] && [ -s "$DIR/kubeconfig" ] && grep -q outpost-cluster "/proc/$(cat "$DIR/pid")/cmdline" 2>/dev/null; then
        printf '%s\n' "$GENERATION" >"$DIR/generation"
        echo "install cluster ready (already running)"; exit 0
      fi
      if [ -s "$DIR/pid" ]; then
        old=$(cat "$DIR/pid"); kill "$old" 2>/dev/null || true
        i=0
        while [ -s "$DIR/pid" ] && kill -0 "$old" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
      fi
      rm -f "$DIR/kubeconfig"
      OUTPOST_DAEMON=1 setsid nohup outpost-cluster -dir "$DIR/data" -kubeconfig-file "$DIR/kubeconfig" -pid-file "$DIR/pid" \
        >"$DIR/log" 2>&1 </dev/null &
      pid=$! shown=0
      while [ ! -s "$DIR/kubeconfig" ]; do
        lines=$(wc -l <"$DIR/log")
        if [ "$lines" -gt "$shown" ]; then sed -n "$((shown+1)),$${lines}p" "$DIR/log"; shown=$lines; fi
        if ! kill -0 "$pid" 2>/dev/null; then echo "the install's cluster did not start:" >&2; cat "$DIR/log" >&2; exit 1; fi
        sleep 0.2
      done
      printf '%s\n' "$GENERATION" >"$DIR/generation"
      echo "install cluster ready"
    EOT
    environment = {
      DIR        = self.input
      GENERATION = self.triggers_replace
    }
  }
}

output "kubeconfig" {
  # Read once the cluster is up: the resource's ID is unknown until then,
  # which defers the file's reading to the apply. try: a later plan after
  # the cluster is gone (a reboot) must not fail.
  value     = terraform_data.cluster_process.id != "" ? try(file("${terraform_data.cluster_process.output}/kubeconfig"), "") : ""
  sensitive = true
}
