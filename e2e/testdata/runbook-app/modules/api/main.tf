resource "terraform_data" "api" {
  input = "api"
}

output "url" {
  value = "http://api.internal"
}
