variable "gate" {
  type = string
}

resource "terraform_data" "gated" {
  input = var.gate
  provisioner "local-exec" {
    command = "echo waiting for the gate; while [ ! -e ${self.input} ]; do sleep 0.2; done; echo \"through the\" gate"
  }
  provisioner "local-exec" {
    when    = destroy
    command = "echo waiting for the gate down; while [ ! -e ${self.input}.down ]; do sleep 0.2; done; echo \"through the\" gate down"
  }
}

output "gate" {
  value = terraform_data.gated.output
}
