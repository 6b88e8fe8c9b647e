resource "terraform_data" "web" {
  input = "web"
}

output "url" {
  value = "https://web.dashboard.test"
}

output "admin_password" {
  value     = "dash-5ecret-output-${terraform_data.web.id}"
  sensitive = true
}
