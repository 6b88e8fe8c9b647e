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

variable "data_dir" {
  type        = string
  description = "Where the stand-in keeps its data: the schema version the migrate action writes"
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

# The data directory, gone with the database.
resource "terraform_data" "data_dir" {
  input = var.data_dir

  provisioner "local-exec" {
    command     = "mkdir -p \"$DIR\""
    environment = { DIR = self.input }
  }

  provisioner "local-exec" {
    when        = destroy
    command     = "rm -rf \"$DIR\" && { rmdir \"$(dirname \"$DIR\")\" 2>/dev/null || true; }"
    environment = { DIR = self.input }
  }
}

output "data_dir" {
  value = terraform_data.data_dir.output
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
