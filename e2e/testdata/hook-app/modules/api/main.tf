resource "terraform_data" "api" {
  input = "api"
}

output "url" {
  value = "http://api-${terraform_data.api.id}.internal:8080"
}
