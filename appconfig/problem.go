package appconfig

import (
	"fmt"
	"slices"
	"strings"
)

// Problem is one reason a config is invalid.
type Problem struct {
	// File is the file, relative to the config's root ("outpost.toml",
	// "components/db.toml", "modules/db/main.tf"); empty when the problem is
	// about the config as a whole or about values given to it.
	File string `json:"file"`
	// Key is the dotted key within the file ("sandbox.source",
	// "inputs[1].type", "variables.db_url"); empty for the whole file.
	Key     string `json:"key"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	where := p.File
	if p.Key != "" {
		if where != "" {
			where += ": "
		}
		where += p.Key
	}
	if where == "" {
		return p.Message
	}
	return where + ": " + p.Message
}

// Problems is every problem found; as an error it says them all.
type Problems []Problem

func (ps Problems) Error() string {
	if len(ps) == 1 {
		return ps[0].String()
	}
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = "  " + p.String()
	}
	return fmt.Sprintf("%d problems:\n%s", len(ps), strings.Join(lines, "\n"))
}

// problems collects Problems.
type problems struct{ list Problems }

func (ps *problems) add(file, key, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: file, Key: key, Message: fmt.Sprintf(format, args...)})
}

// err returns the problems grouped by file (outpost.toml first, problems
// about no file last), each file's in the order they were found; nil when
// there are none.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	rank := func(file string) int {
		switch file {
		case ConfigFile:
			return 0
		case "":
			return 2
		}
		return 1
	}
	out := slices.Clone(ps.list)
	slices.SortStableFunc(out, func(a, b Problem) int {
		if c := rank(a.File) - rank(b.File); c != 0 {
			return c
		}
		return strings.Compare(a.File, b.File)
	})
	return out
}
