package seal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// KeyEncryptionKey wraps and unwraps data keys. A cloud KMS key implements
// it as well as a local key does; ID names the key (and its version) so that
// a wrapped data key says which key unwraps it.
type KeyEncryptionKey interface {
	ID() string
	Wrap(ctx context.Context, dataKey []byte) ([]byte, error)
	Unwrap(ctx context.Context, wrapped []byte) ([]byte, error)
}

// Errors of unwrapping.
var (
	// ErrUnknownKEK: a data key is wrapped by a key that is not configured.
	ErrUnknownKEK = errors.New("key-encryption key not configured")
	// ErrWrongKEK: the configured key of that ID does not unwrap it.
	ErrWrongKEK = errors.New("wrong key-encryption key")
)

// Keyring is the configured keys: Current wraps new data keys (and re-wraps
// old ones on rotation); Previous keys only unwrap, during a rotation.
type Keyring struct {
	Current  KeyEncryptionKey
	Previous []KeyEncryptionKey
}

// NewKeyring checks that current is set and that the IDs are distinct.
func NewKeyring(current KeyEncryptionKey, previous ...KeyEncryptionKey) (*Keyring, error) {
	if current == nil {
		return nil, errors.New("seal: no current key-encryption key")
	}
	k := &Keyring{Current: current}
	for _, p := range previous {
		if p == nil || p.ID() == current.ID() || slices.ContainsFunc(k.Previous, func(o KeyEncryptionKey) bool { return o.ID() == p.ID() }) {
			continue
		}
		k.Previous = append(k.Previous, p)
	}
	return k, nil
}

// Get returns the key of that ID.
func (k *Keyring) Get(id string) (KeyEncryptionKey, bool) {
	for _, key := range append([]KeyEncryptionKey{k.Current}, k.Previous...) {
		if key.ID() == id {
			return key, true
		}
	}
	return nil, false
}

// IDs lists the configured key IDs, current first.
func (k *Keyring) IDs() []string {
	ids := []string{k.Current.ID()}
	for _, p := range k.Previous {
		ids = append(ids, p.ID())
	}
	return ids
}

// Unwrap unwraps a data key wrapped by the key kekID; a key not configured is
// ErrUnknownKEK, one that fails to unwrap ErrWrongKEK, both naming the ID.
func (k *Keyring) Unwrap(ctx context.Context, kekID string, wrapped []byte) ([]byte, error) {
	key, ok := k.Get(kekID)
	if !ok {
		return nil, fmt.Errorf("data keys are wrapped by key-encryption key %s, but only %s is configured: %w",
			kekID, strings.Join(k.IDs(), ", "), ErrUnknownKEK)
	}
	dk, err := key.Unwrap(ctx, wrapped)
	if err != nil {
		return nil, fmt.Errorf("key-encryption key %s: %w", kekID, err)
	}
	return dk, nil
}
