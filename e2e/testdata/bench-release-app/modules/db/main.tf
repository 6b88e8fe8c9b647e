variable "network" {
  type = string
}

resource "terraform_data" "db" {
  input = "db on ${var.network}"
}

output "url" {
  value = terraform_data.db.output
}
