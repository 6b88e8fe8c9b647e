resource "terraform_data" "second" {
  input = "second v1"
}
