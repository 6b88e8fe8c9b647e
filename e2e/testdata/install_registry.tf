# The install's own registry, as the example sandbox starts it (see
# examples/demo-app/sandbox/main.tf), without credentials. The e2e harness
# adds this file to the sandbox of every test app it syncs.

variable "install_id" {
  type = string
}

locals {
  # A port derived from the install ID, in 20000-29999 but for 25672
  # (RabbitMQ's inter-node port, in use on the CI machine).
  install_registry_port = 20000 + parseint(substr(sha256(var.install_id), 0, 4), 16) % 10000
}

resource "terraform_data" "registry" {
  input = {
    dir  = "/tmp/outpost-sandboxes/${var.install_id}/registry"
    addr = "127.0.0.1:${local.install_registry_port == 25672 ? 25673 : local.install_registry_port}"
  }

  provisioner "local-exec" {
    command = "outpost-registry up -dir \"$DIR\" -addr \"$ADDR\""
    environment = {
      DIR  = self.input.dir
      ADDR = self.input.addr
    }
  }

  provisioner "local-exec" {
    when    = destroy
    command = "outpost-registry down -dir \"$DIR\""
    environment = {
      DIR = self.output.dir
    }
  }
}

output "registry_address" {
  value = terraform_data.registry.output.addr
}

output "registry_plain_http" {
  value = true
}
