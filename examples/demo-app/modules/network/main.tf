# The install's application network: two subnets cut out of the sandbox's VPC.

variable "cluster_name" {
  type = string
}

variable "vpc_cidr" {
  type = string
}

resource "terraform_data" "network" {
  input = {
    id                  = "net-${var.cluster_name}"
    public_subnet_cidr  = cidrsubnet(var.vpc_cidr, 8, 1)
    private_subnet_cidr = cidrsubnet(var.vpc_cidr, 8, 2)
  }

  provisioner "local-exec" {
    command = "echo \"creating network $ID\""
    environment = {
      ID = self.input.id
    }
  }
}

output "network_id" {
  value = terraform_data.network.output.id
}

output "public_subnet_cidr" {
  value = terraform_data.network.output.public_subnet_cidr
}

output "private_subnet_cidr" {
  value = terraform_data.network.output.private_subnet_cidr
}
