package customer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// State is the runner's state directory: the customer's pause and consents
// (set while the runner runs, by `outpost-runner pause|resume|consent`) and
// the history.
type State struct{ Dir string }

// DefaultDir is the state directory when none is given: $OUTPOST_STATE_DIR,
// else $XDG_STATE_HOME/outpost-runner, else ~/.local/state/outpost-runner.
func DefaultDir() string {
	if d := os.Getenv("OUTPOST_STATE_DIR"); d != "" {
		return d
	}
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "outpost-runner")
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "state", "outpost-runner")
}

const (
	pauseFile   = "paused.json"
	consentFile = "consents.json"
)

type pauseRecord struct {
	Since  time.Time `json:"since"`
	Reason string    `json:"reason,omitempty"`
}

// Pause pauses the runner (from now, unless it is paused already) and
// returns since when it is paused.
func (s State) Pause(reason string) (time.Time, error) {
	if since, ok, err := s.Paused(); err != nil || ok {
		return since, err
	}
	now := time.Now().UTC().Truncate(time.Second)
	return now, s.write(pauseFile, pauseRecord{Since: now, Reason: reason})
}

// Resume ends a pause; false when the runner was not paused.
func (s State) Resume() (bool, error) {
	err := os.Remove(filepath.Join(s.Dir, pauseFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Paused says whether, and since when, the runner is paused.
func (s State) Paused() (time.Time, bool, error) {
	var p pauseRecord
	ok, err := s.read(pauseFile, &p)
	return p.Since, ok, err
}

// Consent records the customer's consent to kind (protocol.ConsentDeprovision,
// ConsentTeardown) for the next d.
func (s State) Consent(kind string, d time.Duration) (protocol.Consent, error) {
	if kind != protocol.ConsentDeprovision && kind != protocol.ConsentTeardown {
		return protocol.Consent{}, fmt.Errorf("consent %q: must be %s or %s", kind, protocol.ConsentDeprovision, protocol.ConsentTeardown)
	}
	if d <= 0 {
		return protocol.Consent{}, fmt.Errorf("--for %s: must be more than 0", d)
	}
	all, err := s.Consents(time.Now())
	if err != nil {
		return protocol.Consent{}, err
	}
	c := protocol.Consent{Kind: kind, Until: time.Now().Add(d).UTC().Truncate(time.Second)}
	all = append(slices.DeleteFunc(all, func(o protocol.Consent) bool { return o.Kind == kind }), c)
	return c, s.write(consentFile, all)
}

// Withdraw removes the consent to kind.
func (s State) Withdraw(kind string) error {
	all, err := s.Consents(time.Now())
	if err != nil {
		return err
	}
	return s.write(consentFile, slices.DeleteFunc(all, func(o protocol.Consent) bool { return o.Kind == kind }))
}

// Consents are the consents that hold at now.
func (s State) Consents(now time.Time) ([]protocol.Consent, error) {
	var all []protocol.Consent
	if _, err := s.read(consentFile, &all); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(c protocol.Consent) bool { return !c.Until.After(now) }), nil
}

// Report is the pause and the consents, for the heartbeat.
func (s State) Report() (protocol.CustomerState, error) {
	var st protocol.CustomerState
	since, paused, err := s.Paused()
	if err != nil {
		return st, err
	}
	if paused {
		st.PausedSince = &since
	}
	st.Consents, err = s.Consents(time.Now())
	return st, err
}

// read reads name's JSON into v; false when there is no such file.
func (s State) read(name string, v any) (bool, error) {
	b, err := os.ReadFile(filepath.Join(s.Dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("state: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("state: %s: %w", name, err)
	}
	return true, nil
}

// write replaces name with v's JSON, atomically.
func (s State) write(name string, v any) error {
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, name+".*")
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return os.Rename(tmp.Name(), filepath.Join(s.Dir, name))
}
