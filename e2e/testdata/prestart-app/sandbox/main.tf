# Slow on purpose: the first component's job is queued, fetches its module
# and runs init while the sandbox applies (TestPrestartedJobWaitsForItsDependency).
resource "terraform_data" "sandbox" {
  input = "sandbox"
  provisioner "local-exec" {
    command = "sleep 2"
  }
}

output "id" {
  value = terraform_data.sandbox.id
}
