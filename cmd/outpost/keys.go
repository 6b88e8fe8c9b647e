package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/outpost-dev/outpost/internal/envflag"
	"github.com/outpost-dev/outpost/store/seal"
)

// The key-encryption key file `outpost dev` (and the embedded SQLite mode)
// writes in the data directory when none is given.
const kekFileName = "kek"

// kekFlags say where the key-encryption keys are: the current one wraps the
// data keys, a previous one only unwraps them (during a rotation).
type kekFlags struct {
	file, key, previousFile, previous string
	// generate makes a missing key a new one in the data directory (dev,
	// and the embedded SQLite mode).
	generate bool
}

func (k *kekFlags) register(fs *envflag.FlagSet) {
	fs.StringVar(&k.file, "kek-file", "", "file of the key-encryption key that seals secrets at rest (base64 of 32 bytes: outpost kek generate); "+
		"default with SQLite or in dev: <data-dir>/kek, made on first start")
	fs.StringVar(&k.key, "kek", "", "the key-encryption key itself (base64); better set in the environment than on the command line")
	fs.StringVar(&k.previousFile, "kek-previous-file", "", "file of the previous key-encryption key, which still unwraps data keys during a rotation")
	fs.StringVar(&k.previous, "kek-previous", "", "the previous key-encryption key itself (base64)")
}

// keyring loads the configured keys; without one it makes or reads
// <data-dir>/kek when generate is set, and is an error otherwise.
func (k *kekFlags) keyring(log *slog.Logger, dataDir string, generate bool) (*seal.Keyring, error) {
	current, err := loadKEK(k.file, k.key, "-kek-file", "-kek")
	if err != nil {
		return nil, err
	}
	if current == nil {
		if !generate {
			return nil, fmt.Errorf("no key-encryption key: secrets at rest are sealed with one; give -kek-file or OUTPOST_KEK " +
				"(make one with `outpost kek init -kek-file F`, or print one with `outpost kek generate`), the same to every api and worker process")
		}
		path := filepath.Join(dataDir, kekFileName)
		key, created, err := seal.LoadOrCreateLocalKey(path)
		if err != nil {
			return nil, err
		}
		if created {
			log.Info("made a key-encryption key for secrets at rest; keep it with the data directory", "file", path, "kek", key.ID())
		}
		current = key
	}
	previous, err := loadKEK(k.previousFile, k.previous, "-kek-previous-file", "-kek-previous")
	if err != nil {
		return nil, err
	}
	if previous == nil {
		return seal.NewKeyring(current)
	}
	return seal.NewKeyring(current, previous)
}

// where says where the current key comes from, for a banner.
func (k *kekFlags) where(dataDir string) string {
	switch {
	case k.file != "":
		return k.file
	case k.key != "":
		return "-kek (OUTPOST_KEK)"
	}
	return filepath.Join(dataDir, kekFileName)
}

// loadKEK reads a key from its file or its text; nil when neither is given.
func loadKEK(file, text, fileFlag, textFlag string) (seal.KeyEncryptionKey, error) {
	switch {
	case file != "" && text != "":
		return nil, fmt.Errorf("give %s or %s, not both", fileFlag, textFlag)
	case file != "":
		k, err := seal.LoadLocalKey(file)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fileFlag, err)
		}
		return k, nil
	case text != "":
		k, err := seal.ParseLocalKey(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", textFlag, err)
		}
		return k, nil
	}
	return nil, nil
}
