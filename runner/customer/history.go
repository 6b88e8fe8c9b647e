package customer

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/outpost-dev/outpost/protocol"
)

// DefaultRetention is how long the history keeps a day's file.
const DefaultRetention = 90 * 24 * time.Hour

// Entry is one job the runner ran (or refused), as the customer's history
// keeps it. It holds digests, never a manifest's secrets.
type Entry struct {
	At      time.Time `json:"at"`
	JobID   string    `json:"job_id"`
	Attempt int       `json:"attempt"`
	Type    string    `json:"type"`
	protocol.JobOrigin
	// Command is a debug command's program and arguments.
	Command []string `json:"command,omitempty"`
	// Action and Step name an action job's action and step.
	Action string `json:"action,omitempty"`
	Step   string `json:"step,omitempty"`
	// ManifestDigest is the sha256 of the job's manifest; PlanDigest, of the
	// saved plan a terraform apply applied.
	ManifestDigest string `json:"manifest_digest"`
	PlanDigest     string `json:"plan_digest,omitempty"`
	// Refused is why the runner's policy refused the job (it did not run).
	Refused string `json:"refused,omitempty"`
	// PolicyResults are what plan policies said of the job (set by the
	// policy checks that run on plans; empty when none ran).
	PolicyResults json.RawMessage `json:"policy_results,omitempty"`
	Status        string          `json:"status"`
	ExitCode      *int            `json:"exit_code,omitempty"`
	Error         string          `json:"error,omitempty"`
}

// NewEntry starts job's entry: what it is and where it comes from.
func NewEntry(job protocol.Job) Entry {
	e := Entry{At: time.Now().UTC(), JobID: job.ID, Attempt: job.Attempt, Type: job.Type, ManifestDigest: digest(job.Manifest)}
	if job.Origin != nil {
		e.JobOrigin = *job.Origin
	}
	switch job.Type {
	case protocol.JobTypeCommand:
		var m protocol.CommandManifest
		if json.Unmarshal(job.Manifest, &m) == nil {
			e.Command = m.Args
		}
	case protocol.JobTypeAction:
		var m protocol.ActionManifest
		if json.Unmarshal(job.Manifest, &m) == nil {
			e.Action, e.Step = m.Action, m.Step
		}
	case protocol.JobTypeTerraform:
		var m struct {
			PlanFile []byte `json:"plan_file"`
		}
		if json.Unmarshal(job.Manifest, &m) == nil && len(m.PlanFile) > 0 {
			e.PlanDigest = digest(m.PlanFile)
		}
	}
	return e
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// History is the append-only record in <state dir>/history.
type History struct {
	dir       string
	retention time.Duration
	mu        sync.Mutex
	pruned    string // the day last pruned
}

// OpenHistory is the history under state's directory, keeping retention
// (DefaultRetention when 0).
func (s State) OpenHistory(retention time.Duration) *History {
	if retention <= 0 {
		retention = DefaultRetention
	}
	return &History{dir: filepath.Join(s.Dir, "history"), retention: retention}
}

// Append adds e to its day's file (opened for append only, synced) and,
// once a day, removes the days past the retention.
func (h *History) Append(e Entry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		return fmt.Errorf("history: %w", err)
	}
	day := e.At.UTC().Format(time.DateOnly)
	if h.pruned != day {
		h.prune(e.At)
		h.pruned = day
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(h.dir, day+".jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// prune removes the day files older than the retention.
func (h *History) prune(now time.Time) {
	files, _ := filepath.Glob(filepath.Join(h.dir, "*.jsonl"))
	for _, f := range files {
		day, err := time.Parse(time.DateOnly, strings.TrimSuffix(filepath.Base(f), ".jsonl"))
		if err == nil && now.Sub(day) > h.retention+24*time.Hour {
			os.Remove(f)
		}
	}
}

// Read returns the entries since a time, oldest first.
func (h *History) Read(since time.Time) ([]Entry, error) {
	files, err := filepath.Glob(filepath.Join(h.dir, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []Entry
	for _, name := range files {
		if day, err := time.Parse(time.DateOnly, strings.TrimSuffix(filepath.Base(name), ".jsonl")); err == nil &&
			day.Add(24*time.Hour).Before(since) {
			continue
		}
		if out, err = readDay(name, since, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func readDay(name string, since time.Time, out []Entry) ([]Entry, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		var e Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a line cut short by a crash
		}
		if !e.At.Before(since) {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
