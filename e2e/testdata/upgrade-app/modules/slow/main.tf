variable "gate" {
  type = string
}

resource "terraform_data" "slow" {
  input = var.gate
  provisioner "local-exec" {
    command = "i=0; while [ ! -e \"$GATE\" ]; do i=$((i+1)); echo \"line $i\"; sleep 0.2; done; echo \"the gate opened after $i lines\""
    environment = {
      GATE = self.input
    }
  }
}

output "lines" {
  value = terraform_data.slow.id
}
