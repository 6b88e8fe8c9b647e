resource "terraform_data" "broken" {
  provisioner "local-exec" {
    command = "echo boom; exit 1"
  }
}
