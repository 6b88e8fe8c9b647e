# The install's own registry, as the example sandbox starts it (see
# examples/demo-app/sandbox/main.tf), without credentials. The e2e harness
# adds this file to the sandbox of every test app it syncs.

variable "install_id" {
  type = string
}

resource "terraform_data" "registry" {
  input = {
    dir  = "/tmp/outpost-sandboxes/${var.install_id}/registry"
    addr = "127.0.0.1:${20000 + parseint(substr(sha256(var.install_id), 0, 4), 16) % 10000}"
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
