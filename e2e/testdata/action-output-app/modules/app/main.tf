variable "schema" { type = string }
variable "token" { type = string }

resource "terraform_data" "app" {
  input = var.schema
}

output "schema" {
  value = terraform_data.app.output
}

output "token_length" {
  value = length(var.token)
}
