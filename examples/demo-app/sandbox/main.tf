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

output "registry_url" {
  value = "registry.${terraform_data.cluster.output.region}.example.com/${terraform_data.cluster.output.name}"
}
