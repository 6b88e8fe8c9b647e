output "version" {
  value = "2"
}
