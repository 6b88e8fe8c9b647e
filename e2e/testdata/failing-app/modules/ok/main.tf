resource "terraform_data" "ok" {
  input = "ok"
}
