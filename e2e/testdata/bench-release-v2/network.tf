resource "terraform_data" "network" {
  input = "network v2"
}

output "id" {
  value = terraform_data.network.output
}
