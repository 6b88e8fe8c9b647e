output "url" {
  value     = "postgres://secret@db"
  sensitive = true
}
output "host" { value = "db" }
