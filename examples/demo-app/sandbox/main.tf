# The sandbox: the base infrastructure of an install. Here a stand-in for a
# cloud network made of terraform_data (no provider needed), and the
# install's own registry. The Kubernetes cluster is a component (cluster).

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

# The registry's data directory: gone with the install ("outpost-registry
# down" stops the daemon and removes it).
resource "terraform_data" "registry" {
  input = {
    dir  = local.registry_dir
    addr = "127.0.0.1:${local.registry_port}"
  }

  provisioner "local-exec" {
    when = destroy
    # The install's directory goes with the last of its parts (rmdir of a
    # directory that is not empty yet fails, harmlessly).
    command = "outpost-registry down -dir \"$DIR\" && rm -f \"$DIR.generation\" && { rmdir \"$(dirname \"$DIR\")\" 2>/dev/null || true; }"
    environment = {
      DIR = self.output.dir
    }
  }
}

# The registry's process. A daemon that is not running (its machine or
# container restarted) makes the plan replace this, which starts it again on
# the same data: its generation, written when it starts, is read back only
# while it runs; otherwise the plan gives a new one. Read at plan time only:
# nothing in the apply starts the daemon before this resource's own turn.
locals {
  registry_pid        = try(trimspace(file("${local.registry_dir}/pid")), "")
  registry_running    = local.registry_pid != "" && strcontains(try(file("/proc/${local.registry_pid}/cmdline"), ""), "outpost-registry")
  registry_generation = local.registry_running ? try(trimspace(file("${local.registry_dir}.generation")), "") : "started ${plantimestamp()}"
}

resource "terraform_data" "registry_process" {
  triggers_replace = local.registry_generation
  input            = terraform_data.registry.output

  provisioner "local-exec" {
    command = "outpost-registry up -dir \"$DIR\" -addr \"$ADDR\" && printf '%s\\n' \"$GENERATION\" >\"$DIR.generation\""
    environment = {
      DIR                       = self.input.dir
      ADDR                      = self.input.addr
      GENERATION                = self.triggers_replace
      OUTPOST_REGISTRY_USERNAME = "outpost"
      OUTPOST_REGISTRY_PASSWORD = terraform_data.registry_password.output
    }
  }
}

output "registry_address" {
  value = terraform_data.registry_process.output.addr
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

output "local_dir" {
  # Where the local stand-ins keep their data: the cluster component's too.
  value = var.local_dir
}
