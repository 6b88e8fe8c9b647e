variable "fail" {
  type = bool
}

resource "terraform_data" "slow" {
  input = "slow"
  provisioner "local-exec" {
    command = var.fail ? "sleep 3; echo failing on purpose; exit 1" : "sleep 3"
  }
}

output "value" {
  value = terraform_data.slow.output
}
