variable "path" {
  type = string
}

# Reading the FIFO blocks until the test writes it: the test holds this
# component's plans up.
resource "terraform_data" "gated" {
  input = trimspace(file(var.path))
}
