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

output "local_dir" {
  # Where the local stand-ins keep their data: the cluster component's too.
  value = var.local_dir
}
