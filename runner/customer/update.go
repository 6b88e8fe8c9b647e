package customer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// A runner update the customer has not accepted is held: its verified
// release and manifest are kept in the state directory (the binary beside
// the runner's, Config.Executable + HeldSuffix) until the customer runs
// `outpost-runner update accept VERSION`, which the running runner sees
// and switches to.

const (
	heldFile     = "update-available.json"
	acceptedFile = "update-accepted.json"
)

// HeldUpdate is an update the runner holds back until the customer accepts it.
type HeldUpdate struct {
	Manifest protocol.RunnerUpdateManifest `json:"manifest"`
	Release  protocol.RunnerRelease        `json:"release"`
	Since    time.Time                     `json:"since"`
}

type acceptRecord struct {
	Version string    `json:"version"`
	At      time.Time `json:"at"`
}

// Hold keeps h as the update waiting for the customer, in place of any other.
func (s State) Hold(h HeldUpdate) error {
	if err := s.remove(acceptedFile); err != nil {
		return err
	}
	return s.write(heldFile, h)
}

// Held is the update waiting for the customer, if any.
func (s State) Held() (HeldUpdate, bool, error) {
	var h HeldUpdate
	ok, err := s.read(heldFile, &h)
	return h, ok, err
}

// AcceptUpdate records the customer's acceptance of the held update of
// version; it is an error when no update of that version is held.
func (s State) AcceptUpdate(version string) error {
	h, ok, err := s.Held()
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("no runner update is waiting for the customer (version %s)", version)
	case h.Manifest.Version != version:
		return fmt.Errorf("runner %s is not the update waiting for the customer: %s is", version, h.Manifest.Version)
	}
	return s.write(acceptedFile, acceptRecord{Version: version, At: time.Now().UTC().Truncate(time.Second)})
}

// Accepted is the version the customer accepted ("" when none).
func (s State) Accepted() (string, error) {
	var a acceptRecord
	_, err := s.read(acceptedFile, &a)
	return a.Version, err
}

// DropHeld forgets the held update and its acceptance.
func (s State) DropHeld() error {
	return errors.Join(s.remove(heldFile), s.remove(acceptedFile))
}

func (s State) remove(name string) error {
	if err := os.Remove(filepath.Join(s.Dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}
