variable "path" {
  type = string
}

# Reading the FIFO blocks until the test writes it: the test holds this
# component's plans up. What it reads does not matter.
resource "terraform_data" "gated" {
  input = length(file(var.path)) >= 0 ? "gated" : "never"
}
