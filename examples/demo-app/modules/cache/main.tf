# A stand-in for a cache in the private subnet.

variable "subnet_cidr" {
  type = string
}

variable "enabled" {
  type    = bool
  default = true
}

variable "memory_mb" {
  type    = number
  default = 128
}

resource "terraform_data" "cache" {
  count = var.enabled ? 1 : 0

  input = {
    endpoint  = "cache.${replace(var.subnet_cidr, "/", "-")}.internal:6379"
    memory_mb = var.memory_mb
  }

  provisioner "local-exec" {
    command = "echo \"creating a $MEMORY MB cache at $ENDPOINT\""
    environment = {
      ENDPOINT = self.input.endpoint
      MEMORY   = self.input.memory_mb
    }
  }
}

output "endpoint" {
  value = var.enabled ? terraform_data.cache[0].output.endpoint : ""
}
