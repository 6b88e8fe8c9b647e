variable "path" {
  type = string
}

# The file is the world this component watches: changed outside terraform,
# the plan is no longer empty.
resource "terraform_data" "watched" {
  input = trimspace(file(var.path))
}

output "value" {
  value = terraform_data.watched.output
}
