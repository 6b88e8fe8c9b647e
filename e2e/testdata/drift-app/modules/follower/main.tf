variable "watched" {
  type = string
}

# Follows watched's output: when a reconcile applies watched's drift, this
# component's variable changes with it.
resource "terraform_data" "follower" {
  input = var.watched
}

output "value" {
  value = terraform_data.follower.output
}
