output "cluster" { value = "c1" }
