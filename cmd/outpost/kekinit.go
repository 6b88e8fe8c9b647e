package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/outpost-dev/outpost/store/seal"
)

// runKEKInit makes the -kek-file when it is missing: with -kek's key when
// given, a new one otherwise. A key already in the file is kept; one that
// differs from -kek is an error (changing keys is a rotation), never
// overwritten. ownerUID >= 0 gives the file to that user (a one-shot
// container running as root, for the control plane's user).
func runKEKInit(k kekFlags, ownerUID int) error {
	if k.file == "" {
		return errors.New("kek init: -kek-file (OUTPOST_KEK_FILE): the file to make is missing")
	}
	text := k.key
	if text == "" {
		text = seal.GenerateKeyText()
	}
	want, err := seal.ParseLocalKey(text)
	if err != nil {
		return fmt.Errorf("kek init: -kek (OUTPOST_KEK): %w", err)
	}
	got, written, err := seal.LoadOrWriteLocalKey(k.file, text)
	if err != nil {
		return fmt.Errorf("kek init: -kek-file %s: %w", k.file, err)
	}
	if !written && k.key != "" && got.ID() != want.ID() {
		return fmt.Errorf("kek init: -kek-file %s holds key %s, and -kek (OUTPOST_KEK) is key %s: "+
			"the file is kept; to change keys, rotate (outpost kek rotate -kek-previous-file)", k.file, got.ID(), want.ID())
	}
	if ownerUID >= 0 {
		if err := os.Chown(k.file, ownerUID, -1); err != nil {
			return fmt.Errorf("kek init: -owner-uid: %w", err)
		}
	}
	verb := "kept"
	if written {
		verb = "made"
	}
	fmt.Printf("%s key-encryption key %s in %s\n", verb, got.ID(), k.file)
	return nil
}
