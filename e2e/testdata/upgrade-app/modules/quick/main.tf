resource "terraform_data" "quick" {
  input = "quick"
}

output "id" {
  value = terraform_data.quick.id
}
