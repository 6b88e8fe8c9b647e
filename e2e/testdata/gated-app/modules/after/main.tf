variable "gated" {
  type = string
}

resource "terraform_data" "after" {
  input = var.gated
}
