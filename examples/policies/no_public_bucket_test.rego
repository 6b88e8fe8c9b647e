package outpost.no_public_bucket_test

import data.outpost.no_public_bucket

plan(changes) := {"kind": "terraform_plan", "terraform": {"resource_changes": changes}}

test_public_acl_denied if {
	msgs := no_public_bucket.deny with input as plan([{"address": "aws_s3_bucket_acl.site", "type": "aws_s3_bucket_acl", "change": {"actions": ["create"], "after": {"acl": "public-read"}}}])
	msgs == {`aws_s3_bucket_acl.site: bucket ACL "public-read" makes the bucket public`}
}

test_private_acl_passes if {
	count(no_public_bucket.deny) == 0 with input as plan([{"address": "aws_s3_bucket_acl.logs", "type": "aws_s3_bucket_acl", "change": {"actions": ["create"], "after": {"acl": "private"}}}])
}

test_open_access_block_denied if {
	msgs := no_public_bucket.deny with input as plan([{"address": "aws_s3_bucket_public_access_block.b", "type": "aws_s3_bucket_public_access_block", "change": {"actions": ["update"], "after": {"block_public_acls": true, "block_public_policy": false, "ignore_public_acls": true, "restrict_public_buckets": true}}}])
	msgs == {"aws_s3_bucket_public_access_block.b: block_public_policy must be true"}
}

test_gcs_all_users_denied if {
	msgs := no_public_bucket.deny with input as plan([{"address": "google_storage_bucket_iam_member.m", "type": "google_storage_bucket_iam_member", "change": {"actions": ["create"], "after": {"member": "allUsers"}}}])
	msgs == {"google_storage_bucket_iam_member.m: grants allUsers on the bucket"}
}

test_other_resources_pass if {
	count(no_public_bucket.deny) == 0 with input as plan([{"address": "terraform_data.db", "type": "terraform_data", "change": {"actions": ["create"], "after": {"input": "x"}}}])
}
