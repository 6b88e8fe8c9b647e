variable "trace" {
  type = string
}

resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "echo start >> ${var.trace}; sleep 8; echo end >> ${var.trace}"
  }
}

output "done" {
  value = terraform_data.slow.id
}
