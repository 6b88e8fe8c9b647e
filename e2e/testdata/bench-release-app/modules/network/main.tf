resource "terraform_data" "network" {
  input = "network v1"
}

output "id" {
  value = terraform_data.network.output
}
