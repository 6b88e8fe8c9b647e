variable "db" {
  type = string
}

variable "cache" {
  type = string
}

variable "image" {
  type = string
}

resource "terraform_data" "api" {
  input = "${var.image} with ${var.db} and ${var.cache}"
}
