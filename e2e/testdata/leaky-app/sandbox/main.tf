variable "password" {
  type      = string
  sensitive = true
}

# Not declared sensitive: the plan shows it in clear.
variable "token" {
  type = string
}

resource "terraform_data" "leak" {
  input = var.token
  provisioner "local-exec" {
    # nonsensitive() lifts terraform's own guard on the output.
    command = "echo \"echoed: ${nonsensitive(var.password)}\""
  }
}

output "id" {
  value = terraform_data.leak.id
}
