resource "terraform_data" "first" {
  input = "first"
}
