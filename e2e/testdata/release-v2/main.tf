variable "mode" {
  type = string
}

resource "terraform_data" "second" {
  input = "second v2"
}

# New in version 2: a check that fails for an install whose mode is "fail".
resource "terraform_data" "check" {
  input = var.mode

  provisioner "local-exec" {
    command = "test \"$MODE\" != fail || { echo the install asks this version to fail; exit 1; }"
    environment = {
      MODE = var.mode
    }
  }
}
