# The sandbox holds nothing of its own: the harness adds the install's
# registry (testdata/install_registry.tf); the cluster is the install's
# kubeconfig input's.
resource "terraform_data" "sandbox" {
  input = "sandbox"
}
