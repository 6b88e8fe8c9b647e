resource "terraform_data" "sandbox" {
  input = "sandbox"
}

output "id" {
  value = terraform_data.sandbox.id
}
