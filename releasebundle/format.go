package releasebundle

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
)

// Media and artifact types of what a bundle holds beside the builds'
// artifacts, which keep their own.
const (
	// ArtifactTypeBundle is the artifact type of the bundle's index.
	ArtifactTypeBundle = "application/vnd.outpost.release-bundle.v1"
	// ArtifactTypeConfig is the artifact type of the config version's manifest.
	ArtifactTypeConfig = "application/vnd.outpost.app-config.v1"
	// MediaTypeConfigArchive is the config directory as a gzipped tar.
	MediaTypeConfigArchive = "application/vnd.outpost.app-config.v1.tar+gzip"
)

// Annotations on the index and its entries.
const (
	AnnotationApp           = "dev.outpost.app"
	AnnotationAppName       = "dev.outpost.app.name"
	AnnotationOrg           = "dev.outpost.org"
	AnnotationConfigVersion = "dev.outpost.config-version"
	AnnotationComponent     = "dev.outpost.component"
	AnnotationComponentType = "dev.outpost.component.type"
	AnnotationBuild         = "dev.outpost.build"
	// AnnotationImage is the reference a chart lists (relocate_images) of
	// an image its build copied; AnnotationImageComponent names that
	// chart's component. Such entries carry no AnnotationComponent.
	AnnotationImage          = "dev.outpost.image"
	AnnotationImageComponent = "dev.outpost.image.component"
)

// Files of the tar beside the OCI layout's own.
const (
	// SignatureFile is the signature, at the tar's root.
	SignatureFile = "outpost-signature.json"
	// RefBundle is the layout's tag (index.json) of the bundle's index.
	RefBundle = "bundle"
)

// Signature is SignatureFile: an ed25519 signature of Message(Index).
type Signature struct {
	Algorithm string `json:"algorithm"` // "ed25519"
	KeyID     string `json:"key_id"`    // KeyID of the public key
	Index     string `json:"index"`     // the bundle index's digest
	Signature []byte `json:"signature"` // base64 in JSON
}

// Message is what a bundle's signature signs: a fixed prefix (so the key
// signs nothing else by accident) and the bundle index's digest.
func Message(indexDigest string) []byte {
	return []byte("outpost release bundle v1\n" + indexDigest + "\n")
}

// KeyID names a public key: the first 16 hex digits of its SHA-256.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return "rel_" + hex.EncodeToString(sum[:8])
}

// PublicKeyPEM encodes a public key as PEM (PKIX, "PUBLIC KEY"), the form
// the customer keeps and `outpost-runner offline verify` reads.
func PublicKeyPEM(pub ed25519.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("release key: %w", err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), nil
}

// ParsePublicKeyPEM reads what PublicKeyPEM wrote.
func ParsePublicKeyPEM(data []byte) (ed25519.PublicKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, errors.New("release key: not a PEM \"PUBLIC KEY\" block")
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("release key: %w", err)
	}
	pub, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, fmt.Errorf("release key: a %T, not an ed25519 key", key)
	}
	return pub, nil
}
