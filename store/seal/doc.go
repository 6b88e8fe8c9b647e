// Package seal is the cryptography of Outpost's secrets at rest: envelope
// encryption. A key-encryption key (KEK: a local AES-256 key from a file or
// the environment, or a cloud KMS behind the same KeyEncryptionKey interface)
// wraps data keys; data keys (one per install or org, kept wrapped in the
// database) seal values with AES-256-GCM, with the value's table, column and
// row as associated data so a sealed value cannot be moved to another row.
//
// A sealed value is text: "osv1:" + data key ID + ":" + base64(nonce ||
// ciphertext). Anything else is a value written before sealing (plaintext),
// which readers return as it is until it is sealed.
package seal
