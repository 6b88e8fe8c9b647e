variable "network" {
  type = string
}

resource "terraform_data" "cache" {
  input = "cache on ${var.network}"
}

output "url" {
  value = terraform_data.cache.output
}
