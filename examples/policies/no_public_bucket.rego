# No storage bucket readable by anyone: an S3 bucket ACL or policy grant to
# the public, or a GCS binding to allUsers, in a terraform plan.
package outpost.no_public_bucket

public_acls := {"public-read", "public-read-write", "website"}

public_members := {"allUsers", "allAuthenticatedUsers"}

deny contains msg if {
	some rc in input.terraform.resource_changes
	rc.type == "aws_s3_bucket_acl"
	rc.change.after.acl in public_acls
	msg := sprintf("%s: bucket ACL %q makes the bucket public", [rc.address, rc.change.after.acl])
}

deny contains msg if {
	some rc in input.terraform.resource_changes
	rc.type == "aws_s3_bucket_public_access_block"
	some setting in ["block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"]
	rc.change.after[setting] == false
	msg := sprintf("%s: %s must be true", [rc.address, setting])
}

deny contains msg if {
	some rc in input.terraform.resource_changes
	startswith(rc.type, "google_storage_bucket_iam_")
	some member in members(rc.change.after)
	member in public_members
	msg := sprintf("%s: grants %s on the bucket", [rc.address, member])
}

members(after) := [after.member] if after.member

members(after) := after.members if not after.member
