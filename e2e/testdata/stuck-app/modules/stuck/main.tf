variable "account" {
  type = string
}

# Destroying it needs the account (a file): once it is gone, it cannot be.
resource "terraform_data" "stuck" {
  input = var.account
  provisioner "local-exec" {
    when    = destroy
    command = "test -e ${self.input} || { echo \"the account ${self.input} is gone\" >&2; exit 1; }"
  }
}
