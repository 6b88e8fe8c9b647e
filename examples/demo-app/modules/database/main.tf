# A stand-in for a managed database in the private subnet.

variable "name" {
  type = string
}

variable "subnet_cidr" {
  type = string
}

variable "password" {
  type      = string
  sensitive = true
}

variable "tags" {
  type    = map(string)
  default = {}
}

resource "terraform_data" "database" {
  input = {
    name = var.name
    host = "${var.name}.${replace(var.subnet_cidr, "/", "-")}.internal"
    port = 5432
    tags = var.tags
  }

  provisioner "local-exec" {
    command = "echo \"creating database $NAME at $HOST\""
    environment = {
      NAME = self.input.name
      HOST = self.input.host
    }
  }
}

output "host" {
  value = terraform_data.database.output.host
}

output "port" {
  value = terraform_data.database.output.port
}

output "url" {
  value     = "postgres://admin:${var.password}@${terraform_data.database.output.host}:${terraform_data.database.output.port}/app"
  sensitive = true
}
