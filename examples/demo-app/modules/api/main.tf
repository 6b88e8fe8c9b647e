# The app itself: needs the database and the cache.

variable "replicas" {
  type = number
}

variable "database_url" {
  type      = string
  sensitive = true
}

variable "cache_endpoint" {
  type = string
}

variable "allowed_cidrs" {
  type = list(string)
}

variable "public_url" {
  type = string
}

variable "schema_version" {
  type        = string
  description = "The database schema version the API runs against: the migrate action's output"
}

variable "network_id" {
  type        = string
  description = "Set through TF_VAR_network_id, to show env_vars"
}

resource "terraform_data" "api" {
  input = {
    replicas       = var.replicas
    cache_endpoint = var.cache_endpoint
    allowed_cidrs  = var.allowed_cidrs
    url            = var.public_url
    network_id     = var.network_id
    schema_version = var.schema_version
  }

  # Changes when the database URL does, without storing it in the input.
  triggers_replace = [sha256(var.database_url)]

  provisioner "local-exec" {
    command = "echo \"starting $REPLICAS API replicas at $URL\""
    environment = {
      REPLICAS = self.input.replicas
      URL      = self.input.url
    }
  }
}

output "url" {
  value = terraform_data.api.output.url
}

output "replicas" {
  value = terraform_data.api.output.replicas
}

output "schema_version" {
  value = terraform_data.api.output.schema_version
}
