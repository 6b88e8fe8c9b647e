variable "prev" {
  type = string
}

variable "suffix" {
  type = string
}

resource "terraform_data" "next" {
  input = "${var.prev}/${var.suffix}"
}

output "value" {
  value = terraform_data.next.output
}
