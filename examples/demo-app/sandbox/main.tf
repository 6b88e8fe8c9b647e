# The sandbox: the base infrastructure of an install. Here a stand-in for a
# cluster and a network, made of terraform_data so it needs no provider.

terraform {
  required_version = ">= 1.5.0"
}

variable "install_name" {
  type        = string
  description = "The install's name"
}

variable "region" {
  type = string
}

variable "vpc_cidr" {
  type    = string
  default = "10.0.0.0/16"
}

resource "terraform_data" "cluster" {
  input = {
    name     = "${var.install_name}-cluster"
    region   = var.region
    vpc_cidr = var.vpc_cidr
  }

  provisioner "local-exec" {
    command = "echo \"creating cluster $NAME in $REGION ($CIDR)\""
    environment = {
      NAME   = self.input.name
      REGION = self.input.region
      CIDR   = self.input.vpc_cidr
    }
  }

  provisioner "local-exec" {
    when    = destroy
    command = "echo \"deleting cluster $NAME\""
    environment = {
      NAME = self.output.name
    }
  }
}

output "cluster_name" {
  value = terraform_data.cluster.output.name
}

output "region" {
  value = terraform_data.cluster.output.region
}

output "vpc_cidr" {
  value = terraform_data.cluster.output.vpc_cidr
}

# The install's own OCI registry: every component's build is synced here
# before it deploys, so the install never pulls from the vendor. A cloud
# sandbox would create an ECR or ACR repository; this local one starts
# outpost-registry (on the runner's PATH) as a daemon on loopback, and stops
# it on destroy ("outpost-registry up" marks the daemon OUTPOST_DAEMON=1,
# which tells the runner it is meant to outlive the job).

variable "install_id" {
  type        = string
  description = "The install's ID: names the registry's data directory and picks its port"
}

variable "local_dir" {
  type        = string
  default     = "/tmp/outpost-sandboxes"
  description = "Where local stand-ins (the registry) keep their data"
}

variable "registry_port" {
  type        = number
  default     = 0
  description = "The registry's port (0: one derived from the install ID, in 20000-29999 but for 25672, RabbitMQ's inter-node port)"
}

resource "terraform_data" "registry_password" {
  input = uuid()
  lifecycle {
    ignore_changes = [input]
  }
}

locals {
  registry_dir  = "${var.local_dir}/${var.install_id}/registry"
  derived_port  = 20000 + parseint(substr(sha256(var.install_id), 0, 4), 16) % 10000
  registry_port = var.registry_port != 0 ? var.registry_port : (local.derived_port == 25672 ? 25673 : local.derived_port)
}

resource "terraform_data" "registry" {
  input = {
    dir  = local.registry_dir
    addr = "127.0.0.1:${local.registry_port}"
  }

  provisioner "local-exec" {
    command = "outpost-registry up -dir \"$DIR\" -addr \"$ADDR\""
    environment = {
      DIR                       = self.input.dir
      ADDR                      = self.input.addr
      OUTPOST_REGISTRY_USERNAME = "outpost"
      OUTPOST_REGISTRY_PASSWORD = terraform_data.registry_password.output
    }
  }

  provisioner "local-exec" {
    when = destroy
    # The install's directory goes with the last of its parts (rmdir of a
    # directory that is not empty yet fails, harmlessly).
    command = "outpost-registry down -dir \"$DIR\" && { rmdir \"$(dirname \"$DIR\")\" 2>/dev/null || true; }"
    environment = {
      DIR = self.output.dir
    }
  }
}

output "registry_address" {
  value = terraform_data.registry.output.addr
}

output "registry_username" {
  value = "outpost"
}

output "registry_password" {
  value     = terraform_data.registry_password.output
  sensitive = true
}

output "registry_plain_http" {
  value = true
}

# The install's Kubernetes cluster, where helm_chart components deploy. A
# cloud sandbox would create EKS or AKS; this local one runs etcd and
# kube-apiserver (no kubelet: objects are stored, pods never run) with
# outpost-cluster as a daemon, found through OUTPOST_KUBE_ASSETS.

resource "terraform_data" "cluster_api" {
  input = {
    dir = "${var.local_dir}/${var.install_id}/cluster"
  }

  provisioner "local-exec" {
    command = <<-EOT
      mkdir -p "$DIR"
      # A cluster left by an earlier, failed attempt: stopped first.
      if [ -s "$DIR/pid" ]; then kill "$(cat "$DIR/pid")" 2>/dev/null || true; sleep 1; fi
      rm -f "$DIR/kubeconfig"
      OUTPOST_DAEMON=1 setsid nohup outpost-cluster -dir "$DIR/data" -kubeconfig-file "$DIR/kubeconfig" -pid-file "$DIR/pid" \
        >"$DIR/log" 2>&1 </dev/null &
      i=0
      while [ ! -s "$DIR/kubeconfig" ]; do
        i=$((i+1))
        if [ $i -gt 1200 ]; then echo "the install's cluster did not start:" >&2; cat "$DIR/log" >&2; exit 1; fi
        sleep 0.1
      done
      echo "install cluster ready"
    EOT
    environment = {
      DIR = self.input.dir
    }
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

output "kubeconfig" {
  # Read once the cluster is up: the resource's ID is unknown until then,
  # which defers the file's reading to the apply.
  # try: a later plan after the cluster is gone (a reboot) must not fail.
  value     = terraform_data.cluster_api.id != "" ? try(file("${terraform_data.cluster_api.output.dir}/kubeconfig"), "") : ""
  sensitive = true
}
